"""mx.contrib.text: count_tokens_from_str, Vocabulary and the token
embeddings, with values MXNet 1.9.1 gives for the same calls."""
import collections
import hashlib
import os

import numpy as np
import pytest

import aiond as mx
from aiond import nd
from aiond.base import MXNetError
from aiond.contrib import text


def test_count_tokens_from_str():
    s = ' Life is great ! \n life is good . \n'
    assert text.utils.count_tokens_from_str(s, ' ', '\n', True) == collections.Counter(
        {'life': 2, 'is': 2, 'great': 1, '!': 1, 'good': 1, '.': 1})
    # the delimiters are regular expressions
    c = collections.Counter({'life': 1})
    out = text.utils.count_tokens_from_str('*Life*is*\n*life*', '\\*', '\n', False, c)
    assert out is c and c == collections.Counter({'life': 2, 'Life': 1, 'is': 1})


def test_vocabulary_order_and_caps():
    counter = collections.Counter(['a', 'b', 'b', 'c', 'c', 'c', 'd', 'd'])
    v = text.vocab.Vocabulary(counter, reserved_tokens=['<pad>'])
    # by frequency, ties in sorted order, after unknown and reserved tokens
    assert v.idx_to_token == ['<unk>', '<pad>', 'c', 'b', 'd', 'a']
    assert v.to_indices(['d', 'zzz', '<pad>']) == [4, 0, 1]
    assert v.to_indices('c') == 2
    assert v.to_tokens([2, 0]) == ['c', '<unk>'] and v.to_tokens(5) == 'a'
    assert text.vocab.Vocabulary(counter, most_freq_count=2).idx_to_token == ['<unk>', 'c', 'b']
    assert text.vocab.Vocabulary(counter, min_freq=2).idx_to_token == ['<unk>', 'c', 'b', 'd']
    assert len(text.vocab.Vocabulary()) == 1


def test_vocabulary_errors():
    counter = collections.Counter(['a'])
    with pytest.raises(AssertionError, match="min_freq"):
        text.vocab.Vocabulary(counter, min_freq=0)
    with pytest.raises(AssertionError, match="duplicate"):
        text.vocab.Vocabulary(counter, reserved_tokens=['x', 'x'])
    with pytest.raises(AssertionError, match="unknown_token"):
        text.vocab.Vocabulary(counter, reserved_tokens=['<unk>'])
    with pytest.raises(AssertionError, match="Counter"):
        text.vocab.Vocabulary({'a': 1})
    with pytest.raises(ValueError, match="invalid"):
        text.vocab.Vocabulary(counter).to_tokens(2)


def _write(path, lines, delim='\t'):
    with open(path, 'w') as f:
        for tok, *vals in lines:
            f.write(delim.join([tok] + [str(v) for v in vals]) + '\n')
    return str(path)


def test_custom_embedding_and_lookup(tmp_path):
    p = _write(tmp_path / 'e.txt', [('a', 0.1, 0.2, 0.3), ('b', 0.4, 0.5, 0.6), ('hdr', 7),
                                    ('a', 9, 9, 9)])
    with pytest.warns(UserWarning):
        e = text.embedding.CustomEmbedding(p, '\t', init_unknown_vec=nd.ones)
    assert e.idx_to_token == ['<unk>', 'a', 'b'] and e.vec_len == 3
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(),
                               [[1, 1, 1], [0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], rtol=1e-6)
    np.testing.assert_allclose(e.get_vecs_by_tokens(['B', 'a']).asnumpy(),
                               [[1, 1, 1], [0.1, 0.2, 0.3]], rtol=1e-6)
    np.testing.assert_allclose(e.get_vecs_by_tokens('B', lower_case_backup=True).asnumpy(),
                               [0.4, 0.5, 0.6], rtol=1e-6)
    e.update_token_vectors(['<unk>', 'b'], nd.array([[0, 0, 0], [2, 2, 2]]))
    np.testing.assert_array_equal(e.idx_to_vec.asnumpy()[[0, 2]], [[0, 0, 0], [2, 2, 2]])
    with pytest.raises(ValueError, match="unknown"):
        e.update_token_vectors('zzz', nd.zeros(3))
    with pytest.raises(AssertionError, match="width"):
        e.update_token_vectors('a', nd.zeros(4))


def test_custom_embedding_loaded_unknown_and_vocabulary(tmp_path):
    p = _write(tmp_path / 'e.txt', [('a', 1, 2), ('<u>', 5, 6), ('c', 3, 4)], ' ')
    v = text.vocab.Vocabulary(collections.Counter(['c', 'c', 'z']), unknown_token='<u>')
    e = text.embedding.CustomEmbedding(p, vocabulary=v, unknown_token='<u>')
    assert e.idx_to_token == ['<u>', 'c', 'z']
    np.testing.assert_array_equal(e.idx_to_vec.asnumpy(), [[5, 6], [3, 4], [5, 6]])


def test_custom_embedding_bad_files(tmp_path):
    with pytest.raises(AssertionError, match="line 2"):
        text.embedding.CustomEmbedding(_write(tmp_path / 'x.txt', [('a', 1, 2), ('b',)]), '\t')
    with pytest.raises(AssertionError, match="dimension"):
        text.embedding.CustomEmbedding(_write(tmp_path / 'y.txt', [('a', 1, 2), ('b', 1, 2, 3)],
                                              ' '))
    with pytest.raises(ValueError, match="valid path"):
        text.embedding.CustomEmbedding(str(tmp_path / 'missing.txt'))


def test_composite_embedding(tmp_path):
    e1 = text.embedding.CustomEmbedding(_write(tmp_path / '1.txt', [('a', 1, 1), ('b', 2, 2)],
                                               ' '), init_unknown_vec=nd.ones)
    e2 = text.embedding.CustomEmbedding(_write(tmp_path / '2.txt', [('b', 7, 8, 9)], ' '))
    v = text.vocab.Vocabulary(collections.Counter(['b', 'b', 'a', 'q']))
    ce = text.embedding.CompositeEmbedding(v, [e1, e2])
    assert ce.idx_to_token == ['<unk>', 'b', 'a', 'q'] and ce.vec_len == 5
    np.testing.assert_array_equal(ce.idx_to_vec.asnumpy(), [[1, 1, 0, 0, 0], [2, 2, 7, 8, 9],
                                                            [1, 1, 0, 0, 0], [1, 1, 0, 0, 0]])


def test_registry_and_pretrained_names():
    names = text.embedding.get_pretrained_file_names()
    assert len(names['glove']) == 10 and len(names['fasttext']) == 327
    assert 'glove.6B.50d.txt' in text.embedding.get_pretrained_file_names('glove')
    with pytest.raises(KeyError):
        text.embedding.get_pretrained_file_names('nope')
    with pytest.raises(KeyError, match="Valid pretrained files"):
        text.embedding.GloVe('glove.nope.txt')
    with pytest.raises(AssertionError, match="not registered"):
        text.embedding.create('nope')


def test_glove_reads_local_file_and_explains_missing(tmp_path, monkeypatch):
    content = 'the 0.5 -0.5\nof 1.0 2.0\n'
    sha1 = hashlib.sha1(content.encode()).hexdigest()
    monkeypatch.setitem(text.embedding.GloVe.pretrained_file_name_sha1, 'glove.6B.2d.txt', sha1)
    os.makedirs(tmp_path / 'glove')
    (tmp_path / 'glove' / 'glove.6B.2d.txt').write_text(content)
    g = text.embedding.create('GloVe', pretrained_file_name='glove.6B.2d.txt',
                              embedding_root=str(tmp_path))
    assert isinstance(g, text.embedding.GloVe) and g.idx_to_token == ['<unk>', 'the', 'of']
    np.testing.assert_array_equal(g.get_vecs_by_tokens('of').asnumpy(), [1, 2])
    # a file that is not there (and cannot be downloaded: no such repository)
    monkeypatch.setenv('MXNET_GLUON_REPO', 'file:///nonexistent/')
    with pytest.raises(MXNetError, match="glove.6B.50d.txt.*does not exist"):
        text.embedding.GloVe('glove.6B.50d.txt', embedding_root=str(tmp_path))


def test_register_custom_class():
    @text.embedding.register
    class MyEmbed31(text.embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {'x.vec': '0' * 40}

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._vec_len = 0

    assert isinstance(text.embedding.create('myembed31'), MyEmbed31)
    assert text.embedding.get_pretrained_file_names('myembed31') == ['x.vec']
    assert mx.contrib.text is text
