"""Token embeddings: vectors for the tokens of a vocabulary, loaded from
pre-trained embedding files (GloVe, FastText, or a file of your own with
``CustomEmbedding``) or concatenated from several (``CompositeEmbedding``).

GloVe and FastText read their files under ``embedding_root/<glove|fasttext>/``.
A file already there with the SHA-1 hash MXNet lists is used as it is;
otherwise it is downloaded as MXNet does, and where that cannot be done
(no network) the error names the file and the path to put it at."""
from __future__ import annotations

import logging
import os
import tarfile
import warnings
import zipfile

from ... import base  # noqa: F401  (MXNet's module has `base`)
from ... import registry  # noqa: F401  (MXNet's module has `registry`)
from ... import ndarray as nd
from ...base import MXNetError, data_dir
from ...util import is_np_array
from . import _constants as C
from . import vocab
from .vocab import _require

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]

# lower-cased class name -> embedding class (MXNet keeps these in mx.registry)
_EMBEDDINGS: dict = {}


def register(embedding_cls):
    """Register a token embedding class (a subclass of ``_TokenEmbedding``)
    under its lower-cased class name, for :func:`create` and
    :func:`get_pretrained_file_names`. Usable as a class decorator."""
    _require(isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding),
             "Can only register subclass of _TokenEmbedding")
    name = embedding_cls.__name__.lower()
    old = _EMBEDDINGS.get(name)
    if old is not None and old is not embedding_cls:
        warnings.warn("New token embedding %s.%s registered with name %s is overriding "
                      "existing token embedding %s.%s" % (
                          embedding_cls.__module__, embedding_cls.__name__, name,
                          old.__module__, old.__name__), UserWarning, stacklevel=2)
    _EMBEDDINGS[name] = embedding_cls
    return embedding_cls


def create(embedding_name, **kwargs):
    """An instance of the registered token embedding ``embedding_name``
    (case-insensitive), built with ``kwargs`` (e.g. ``pretrained_file_name``).
    An embedding instance is returned as it is."""
    if isinstance(embedding_name, _TokenEmbedding):
        _require(not kwargs, "token embedding is already an instance. Additional arguments "
                             "are invalid")
        return embedding_name
    _require(isinstance(embedding_name, str), "token embedding must be of string type")
    name = embedding_name.lower()
    _require(name in _EMBEDDINGS,
             "%s is not registered. Please register with token embedding.register first "
             "(registered: %s)" % (name, ", ".join(sorted(_EMBEDDINGS))))
    return _EMBEDDINGS[name](**kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pre-trained file names ``create(embedding_name, pretrained_file_name=...)``
    accepts: a list for one embedding name, or a dict of every registered name
    to its list when ``embedding_name`` is None."""
    if embedding_name is not None:
        if embedding_name not in _EMBEDDINGS:
            raise KeyError('Cannot find `embedding_name` %s. Use `get_pretrained_file_names('
                           'embedding_name=None).keys()` to get all the valid embedding '
                           'names.' % embedding_name)
        return list(_EMBEDDINGS[embedding_name].pretrained_file_name_sha1.keys())
    return {name: list(cls.pretrained_file_name_sha1.keys())
            for name, cls in _EMBEDDINGS.items()}


def _array(data):
    if is_np_array():
        from ... import numpy as _np
        return _np.array(data)
    return nd.array(data)


class _TokenEmbedding(vocab.Vocabulary):
    """Token embedding base class: a :class:`~.vocab.Vocabulary` whose tokens
    have vectors (``idx_to_vec``, one row per index; row 0 is the unknown
    token's: loaded from the file when the file has ``unknown_token``, else
    made by ``init_unknown_vec``). When a token appears more than once in a
    file, its first vector is kept.

    Attributes
    ----------
    token_to_idx, idx_to_token, unknown_token, reserved_tokens :
        as in Vocabulary.
    vec_len : int
        The length of each vector.
    idx_to_vec : NDArray
        (len(self), vec_len): the vector of each index.
    """

    def __init__(self, **kwargs):
        super(_TokenEmbedding, self).__init__(**kwargs)

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name):
        repo_url = os.environ.get('MXNET_GLUON_REPO', C.APACHE_REPO_URL)
        return '{}gluon/embeddings/{}/{}'.format(
            repo_url, cls.__name__.lower(), cls._get_download_file_name(pretrained_file_name))

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The local path of ``pretrained_file_name``, downloaded (and extracted
        from its archive) into ``embedding_root/<class name>/`` unless a file with
        the expected hash is already there."""
        from ...gluon.utils import check_sha1, download
        embedding_dir = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(embedding_dir, pretrained_file_name)
        url = cls._get_pretrained_file_url(pretrained_file_name)
        downloaded = os.path.join(embedding_dir, os.path.basename(url))
        want = cls.pretrained_file_name_sha1[pretrained_file_name]
        archives = getattr(cls, 'pretrained_archive_name_sha1', None)
        want_download = archives[os.path.basename(url)] if archives is not None else want
        if os.path.exists(path) and check_sha1(path, want):
            return path
        try:
            download(url, downloaded, sha1_hash=want_download)
        except Exception as e:  # noqa: BLE001 - any failure to fetch means the same to the user
            found = ("%s exists but its SHA-1 hash is not %s" % (path, want)
                     if os.path.exists(path) else "%s does not exist" % path)
            raise MXNetError("pre-trained embedding file %r of %s is not available: %s, and "
                             "downloading %s failed (%s: %s). Put the file (SHA-1 %s) at %s, "
                             "or load a local file with CustomEmbedding."
                             % (pretrained_file_name, cls.__name__, found, url,
                                type(e).__name__, e, want, path)) from e
        ext = os.path.splitext(downloaded)[1]
        if ext == '.zip':
            with zipfile.ZipFile(downloaded, 'r') as zf:
                zf.extractall(embedding_dir)
        elif ext == '.gz':
            with tarfile.open(downloaded, 'r:gz') as tar:
                tar.extractall(path=embedding_dir)
        return path

    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec,
                        encoding='utf8'):
        """Index the tokens of an embedding file (``token<delim>v1<delim>v2...``
        a line) after the unknown and reserved tokens and load their vectors.
        Lines with a one-element vector are taken for headers and skipped."""
        pretrained_file_path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(pretrained_file_path):
            raise ValueError('`pretrained_file_path` must be a valid path to the pre-trained '
                             'token embedding file (got %r).' % pretrained_file_path)
        logging.info('Loading pre-trained token embedding vectors from %s',
                     pretrained_file_path)
        vec_len = None
        rows = []
        seen = set()
        loaded_unknown_vec = None
        with open(pretrained_file_path, 'r', encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                _require(len(elems) > 1,
                         'At line %d of the pre-trained text embedding file: the data format '
                         'of the pre-trained token embedding file %s is unexpected.'
                         % (line_num, pretrained_file_path))
                token, vec = elems[0], [float(x) for x in elems[1:]]
                if token == self.unknown_token and loaded_unknown_vec is None:
                    loaded_unknown_vec = vec
                    seen.add(token)
                elif token in seen:
                    warnings.warn('At line %d of the pre-trained token embedding file: the '
                                  'embedding vector for token %s has been loaded and a '
                                  'duplicate embedding for the  same token is seen and '
                                  'skipped.' % (line_num, token))
                elif len(vec) == 1:
                    warnings.warn('At line %d of the pre-trained text embedding file: token %s '
                                  'with 1-dimensional vector %s is likely a header and is '
                                  'skipped.' % (line_num, token, vec))
                else:
                    if vec_len is None:
                        vec_len = len(vec)
                    else:
                        _require(len(vec) == vec_len,
                                 'At line %d of the pre-trained token embedding file: the '
                                 'dimension of token %s is %d but the dimension of previous '
                                 'tokens is %d. Dimensions of all the tokens must be the same.'
                                 % (line_num, token, len(vec), vec_len))
                    rows.append(vec)
                    self._idx_to_token.append(token)
                    self._token_to_idx[token] = len(self._idx_to_token) - 1
                    seen.add(token)
        if vec_len is None:
            if loaded_unknown_vec is None or len(loaded_unknown_vec) < 2:
                raise ValueError('the pre-trained token embedding file %s holds no token '
                                 'vectors' % pretrained_file_path)
            vec_len = len(loaded_unknown_vec)
        _require(loaded_unknown_vec is None or len(loaded_unknown_vec) == vec_len,
                 'the vector of the unknown token %s in %s has %d elements but the other '
                 'tokens have %d' % (self.unknown_token, pretrained_file_path,
                                     len(loaded_unknown_vec or ()), vec_len))
        self._vec_len = vec_len
        # row 0 (the unknown token's) is filled in below
        self._idx_to_vec = _array([[0.0] * vec_len] + rows)
        if loaded_unknown_vec is None:
            init_val = init_unknown_vec(shape=vec_len)
            self._idx_to_vec[C.UNKNOWN_IDX] = (init_val.as_np_ndarray() if is_np_array()
                                               else init_val)
        else:
            self._idx_to_vec[C.UNKNOWN_IDX] = _array(loaded_unknown_vec)

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = vocabulary.token_to_idx.copy() \
            if vocabulary.token_to_idx is not None else None
        self._idx_to_token = vocabulary.idx_to_token[:] \
            if vocabulary.idx_to_token is not None else None
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = vocabulary.reserved_tokens[:] \
            if vocabulary.reserved_tokens is not None else None

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """``idx_to_vec`` for the tokens ``vocab_idx_to_token``: the vectors of
        each embedding in ``token_embeddings`` side by side (each embedding's
        unknown vector for index 0 and for the tokens it lacks)."""
        new_vec_len = sum(embed.vec_len for embed in token_embeddings)
        if is_np_array():
            from ... import numpy as _np
            new_idx_to_vec = _np.zeros(shape=(vocab_len, new_vec_len))
        else:
            new_idx_to_vec = nd.zeros(shape=(vocab_len, new_vec_len))
        col = 0
        for embed in token_embeddings:
            end = col + embed.vec_len
            new_idx_to_vec[0, col:end] = embed.idx_to_vec[0]
            if vocab_len > 1:
                new_idx_to_vec[1:, col:end] = embed.get_vecs_by_tokens(vocab_idx_to_token[1:])
            col = end
        self._vec_len = new_vec_len
        self._idx_to_vec = new_idx_to_vec

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is not None:
            _require(isinstance(vocabulary, vocab.Vocabulary),
                     'The argument `vocabulary` must be an instance of '
                     'mxnet.contrib.text.vocab.Vocabulary.')
            self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
            self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self):
        """The length of each token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """NDArray (len(self), vec_len): the vector of each index."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-d, ``vec_len``), or of each token of a list
        (2-d); unknown tokens get the unknown vector. ``lower_case_backup``:
        a token not found as it is is looked up in lower case."""
        single = not isinstance(tokens, list)
        if single:
            tokens = [tokens]
        t2i = self.token_to_idx
        if lower_case_backup:
            indices = [t2i[t] if t in t2i else t2i.get(t.lower(), C.UNKNOWN_IDX)
                       for t in tokens]
        else:
            indices = [t2i.get(t, C.UNKNOWN_IDX) for t in tokens]
        if is_np_array():
            from ... import numpy_extension as _npx
            embed = _npx.embedding
        else:
            embed = nd.Embedding
        vecs = embed(_array(indices), self.idx_to_vec, self.idx_to_vec.shape[0],
                     self.idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Set the vectors of ``tokens`` (a token or a list) to ``new_vectors``
        (an NDArray of shape (len(tokens), vec_len); 1-d also for one token).
        Every token must be indexed: to change the unknown vector, name the
        unknown token itself."""
        _require(self.idx_to_vec is not None,
                 'The property `idx_to_vec` has not been properly set.')
        if not isinstance(tokens, list) or len(tokens) == 1:
            _require(isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) in (1, 2),
                     '`new_vectors` must be a 1-D or 2-D NDArray if `tokens` is a singleton.')
            if not isinstance(tokens, list):
                tokens = [tokens]
            if len(new_vectors.shape) == 1:
                new_vectors = new_vectors.expand_dims(axis=0)
        else:
            _require(isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) == 2,
                     '`new_vectors` must be a 2-D NDArray if `tokens` is a list of multiple '
                     'strings.')
        _require(new_vectors.shape == (len(tokens), self.vec_len),
                 'The length of new_vectors must be equal to the number of tokens and the '
                 'width of new_vectors must be equal to the dimension of embeddings of the '
                 'glossary: expected %s, got %s.' % ((len(tokens), self.vec_len),
                                                     new_vectors.shape))
        indices = []
        for token in tokens:
            if token not in self.token_to_idx:
                raise ValueError('Token %s is unknown. To update the embedding vector for an '
                                 'unknown token, please specify it explicitly as the '
                                 '`unknown_token` %s in `tokens`. This is to avoid unintended '
                                 'updates.' % (token, self.idx_to_token[C.UNKNOWN_IDX]))
            indices.append(self.token_to_idx[token])
        self._idx_to_vec[_array(indices)] = new_vectors

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        """KeyError unless ``pretrained_file_name`` is one of the class's files."""
        name = cls.__name__.lower()
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise KeyError('Cannot find pretrained file %s for token embedding %s. Valid '
                           'pretrained files for embedding %s: %s'
                           % (pretrained_file_name, name, name,
                              ', '.join(cls.pretrained_file_name_sha1.keys())))


@register
class GloVe(_TokenEmbedding):
    """The GloVe word embedding (https://nlp.stanford.edu/projects/glove/;
    Pennington, Socher and Manning, 2014). Pre-trained vectors licensed under
    the PDDL.

    Parameters
    ----------
    pretrained_file_name : str, default 'glove.840B.300d.txt'
        One of ``get_pretrained_file_names('glove')``.
    embedding_root : str, default $MXNET_HOME/embeddings
        Where the files are kept (under ``glove/``).
    init_unknown_vec : callable, default nd.zeros
        Makes the unknown token's vector (called with ``shape=vec_len``).
    vocabulary : Vocabulary, default None
        Index these tokens (with the loaded vectors) instead of every token of
        the file.
    """
    pretrained_archive_name_sha1 = C.GLOVE_ARCHIVE_SHA1
    pretrained_file_name_sha1 = C.GLOVE_FILE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        # glove.6B.50d.txt comes in glove.6B.zip: the archive of the same corpus
        corpus = {a.split('.')[1]: a for a in GloVe.pretrained_archive_name_sha1}
        return corpus[pretrained_file_name.split('.')[1]]

    def __init__(self, pretrained_file_name='glove.840B.300d.txt',
                 embedding_root=os.path.join(data_dir(), 'embeddings'),
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super(GloVe, self).__init__(**kwargs)
        path = GloVe._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, ' ', init_unknown_vec)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """The fastText word embedding (https://fasttext.cc/; Bojanowski et al.,
    2016, Joulin et al., 2016). Pre-trained vectors licensed under CC BY-SA 3.0.

    Parameters
    ----------
    pretrained_file_name : str, default 'wiki.simple.vec'
        One of ``get_pretrained_file_names('fasttext')``.
    embedding_root : str, default $MXNET_HOME/embeddings
        Where the files are kept (under ``fasttext/``).
    init_unknown_vec : callable, default nd.zeros
        Makes the unknown token's vector (called with ``shape=vec_len``).
    vocabulary : Vocabulary, default None
        Index these tokens (with the loaded vectors) instead of every token of
        the file.
    """
    pretrained_archive_name_sha1 = C.FAST_TEXT_ARCHIVE_SHA1
    pretrained_file_name_sha1 = C.FAST_TEXT_FILE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return '.'.join(pretrained_file_name.split('.')[:-1]) + '.zip'

    def __init__(self, pretrained_file_name='wiki.simple.vec',
                 embedding_root=os.path.join(data_dir(), 'embeddings'),
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        FastText._check_pretrained_file_names(pretrained_file_name)
        super(FastText, self).__init__(**kwargs)
        path = FastText._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, ' ', init_unknown_vec)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Token vectors from a pre-trained embedding file of your own, one token a
    line: ``token<elem_delim>v1<elem_delim>v2...``, every vector of one length.

    Parameters
    ----------
    pretrained_file_path : str
        The file.
    elem_delim : str, default ' '
        What separates the token and the vector's elements on a line.
    encoding : str, default 'utf8'
        The file's encoding.
    init_unknown_vec : callable, default nd.zeros
        Makes the unknown token's vector when the file has none.
    vocabulary : Vocabulary, default None
        Index these tokens (with the loaded vectors) instead of every token of
        the file.
    """

    def __init__(self, pretrained_file_path, elem_delim=' ', encoding='utf8',
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super(CustomEmbedding, self).__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary`` with the vectors of one or several token
    embeddings concatenated (an embedding that lacks a token contributes its
    unknown vector).

    Parameters
    ----------
    vocabulary : Vocabulary
        The tokens to index.
    token_embeddings : a token embedding or a list of them
    """

    def __init__(self, vocabulary, token_embeddings):
        _require(isinstance(vocabulary, vocab.Vocabulary),
                 'The argument `vocabulary` must be an instance of '
                 'mxnet.contrib.text.vocab.Vocabulary.')
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            _require(isinstance(embed, _TokenEmbedding),
                     'The argument `token_embeddings` must be an instance or a list of '
                     'instances of token embeddings (mxnet.contrib.text.embedding), got %s.'
                     % type(embed).__name__)
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
