"""``mx.contrib.text``: vocabularies and token embeddings for text data
(MXNet 1.9.1's contrib/text): ``utils.count_tokens_from_str``,
``vocab.Vocabulary`` and ``embedding`` (GloVe, FastText, CustomEmbedding,
CompositeEmbedding, and the ``register``/``create`` registry)."""
from . import utils  # noqa: F401
from . import vocab  # noqa: F401
from . import embedding  # noqa: F401
