"""Local embeddings (issue 40): the model that turns a row's redacted text into a vector.

**The library.** ``wordllama`` (the ``continuity[semantic]`` extra): static token embeddings,
average-pooled, so encoding is a tokenizer call and a table lookup on the CPU with NumPy: no
PyTorch, no model service, no network at query time. Its wheel (19 MB) ships the
``l2_supercat`` model (256 dimensions, Matryoshka-trained: the leading 64/128 dimensions are a
model of their own), which is the default and what tests and CI load. Measured on this
machine's 2 cores (``bench/retrieval.py`` prints it): about 6,500 rows a second; a
paraphrase of a row scores 0.47 against it where unrelated text scores about 0.05.

**Models** (``MODELS``): ``wordllama-l2-supercat`` (packaged); ``potion-retrieval-32m`` and
``potion-base-8m`` (Model2Vec static models trained for retrieval, 512/256 dimensions), which
are fetched once, on the user's consent, into the models folder (``fetch_model``), then load
offline like the packaged one.

**Bounds.** A text is cut to ``EMBED_CHARS`` characters before tokenizing (the average of a
multi-megabyte tool output says little, and the padded batch would not be bounded); texts are
encoded ``ENCODE_BATCH`` at a time. Vectors are ``float32``, L2-normalised (an empty or
all-unknown text gives the zero vector, which matches nothing).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuity.core.errors import ConfigError, InputError

if TYPE_CHECKING:
    import numpy as np

    from continuity.retrieval.settings import RetrievalSettings

#: Characters of a text that are embedded (see the module docstring).
EMBED_CHARS = 2_000
#: Texts tokenized and pooled at a time.
ENCODE_BATCH = 32
#: What ``semantic_note`` says once when the extra is missing.
MISSING_EXTRA = (
    "search ranks by words only: install the semantic extra "
    "(pip install 'continuity[semantic]') to also find rows by meaning"
)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Where a model's files are: ``package`` (a Python package shipping them; paths relative
    to it) or ``repo`` (a Hugging Face repository fetched by ``fetch_model``), the weights file
    and the tensor in it, the tokenizer file, and the model's full dimension."""

    name: str
    weights: str
    tensor: str
    tokenizer: str
    dim: int
    package: str | None = None
    repo: str | None = None
    size_mb: int = 0


MODELS: dict[str, ModelSpec] = {
    "wordllama-l2-supercat": ModelSpec(
        "wordllama-l2-supercat",
        "weights/l2_supercat_256.safetensors",
        "embedding.weight",
        "tokenizers/l2_supercat_tokenizer_config.json",
        256,
        package="wordllama",
        size_mb=16,
    ),
    "potion-retrieval-32m": ModelSpec(
        "potion-retrieval-32m",
        "model.safetensors",
        "embeddings",
        "tokenizer.json",
        512,
        repo="minishlab/potion-retrieval-32M",
        size_mb=130,
    ),
    "potion-base-8m": ModelSpec(
        "potion-base-8m",
        "model.safetensors",
        "embeddings",
        "tokenizer.json",
        256,
        repo="minishlab/potion-base-8M",
        size_mb=30,
    ),
}


def semantic_available() -> bool:
    """Whether the ``continuity[semantic]`` extra is installed (``wordllama`` and NumPy
    import), without importing them."""
    from importlib.util import find_spec

    return find_spec("wordllama") is not None and find_spec("numpy") is not None


def models_dir() -> Path:
    """Where fetched models live: ``$CONTINUITY_MODELS_DIR``, else the user cache folder
    (``platformdirs.user_cache_dir("continuity")/models``)."""
    env = os.environ.get("CONTINUITY_MODELS_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("continuity", appauthor=False)) / "models"


def model_files(spec: ModelSpec) -> tuple[Path, Path]:
    """``(weights, tokenizer)`` paths of ``spec``. Raises ``ConfigError`` when a fetched model
    is not fetched yet (naming ``continuity models fetch``), or the package is missing."""
    if spec.package:
        from importlib.util import find_spec

        found = find_spec(spec.package)
        if found is None or not found.submodule_search_locations:
            raise ConfigError(
                f"retrieval.model {spec.name!r}: the package {spec.package!r} is "
                "not installed (pip install 'continuity[semantic]')"
            )
        base = Path(next(iter(found.submodule_search_locations)))
    else:
        base = models_dir() / spec.name
    weights, tokenizer = base / spec.weights, base / spec.tokenizer
    if not weights.is_file() or not tokenizer.is_file():
        raise ConfigError(
            f"retrieval.model {spec.name!r}: not on this machine ({base}); "
            f"fetch it once with: continuity models fetch {spec.name}"
        )
    return weights, tokenizer


def _wordllama_inference() -> Any:
    """``wordllama.inference.WordLlamaInference``, imported without the logging set-up the
    module does at import (``logging.basicConfig(level=logging.INFO)``: every later INFO
    record of the process reached stderr, such as Alembic's 90 lines of an upgrade under
    ``doctor``, a fresh-user review). The root logger's handlers and level are put back."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        from wordllama.inference import WordLlamaInference
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    return WordLlamaInference


class Embedder:
    """A loaded static embedding model: ``encode(texts) -> float32 array (n, dim)``,
    L2-normalised rows. ``model_id`` names model and dimension (``wordllama-l2-supercat/256``):
    vectors of different ids are never compared. Thread-safe (one lock around encoding)."""

    def __init__(self, spec: ModelSpec, dim: int, weights: Path, tokenizer: Path) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        WordLlamaInference = _wordllama_inference()
        if dim > spec.dim:
            raise ConfigError(
                f"retrieval.dim {dim}: the model {spec.name!r} has only {spec.dim} dimensions"
            )
        with safe_open(str(weights), framework="np", device="cpu") as f:
            table = f.get_tensor(spec.tensor)[:, :dim]
        self.spec = spec
        self.dim = dim
        self.model_id = f"{spec.name}/{dim}"
        self._np = np
        self._inference = WordLlamaInference(
            np.ascontiguousarray(table), Tokenizer.from_file(str(tokenizer))
        )
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` (each cut to ``EMBED_CHARS`` characters): shape
        ``(len(texts), dim)``, ``float32``, unit length (zero for a text with no token)."""
        np = self._np
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        cut = [t[:EMBED_CHARS] if t.strip() else " " for t in texts]
        with self._lock:
            out = self._inference.embed(cut, norm=False, batch_size=ENCODE_BATCH)
        out = np.asarray(out, dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        out[(norms == 0).ravel()] = 0.0
        out[[i for i, t in enumerate(texts) if not t.strip()]] = 0.0
        return out


_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _load(name: str, dim: int) -> Embedder:
    spec = MODELS[name]
    weights, tokenizer = model_files(spec)
    return _open(spec, dim, weights, tokenizer)


def _open(spec: ModelSpec, dim: int, weights: Path, tokenizer: Path) -> Embedder:
    """``Embedder(...)``, a file that does not load as the model's being a ``ConfigError``
    naming it (a damaged or foreign download: fresh-user review, where a 28-byte HTML page
    saved as weights gave a traceback on every search)."""
    try:
        return Embedder(spec, dim, weights, tokenizer)
    except ConfigError:
        raise
    except Exception as exc:  # safetensors, tokenizers: any error of the file
        raise ConfigError(
            f"retrieval.model {spec.name!r}: its files do not load as a model "
            f"({weights.parent}: {type(exc).__name__}: {str(exc)[:200]}); "
            f"fetch it again: continuity models fetch {spec.name}"
        ) from exc


def load_embedder(settings: RetrievalSettings) -> Embedder | None:
    """The embedder ``settings`` name, loaded once per process; ``None`` when
    ``semantic = "off"`` or the extra is not installed (``semantic_note`` says so). Raises
    ``ConfigError`` for an unknown model (naming the known ones), a ``dim`` above the model's,
    or a fetched model that is not on this machine."""
    if settings.semantic == "off" or not semantic_available():
        return None
    if settings.model not in MODELS:
        raise ConfigError(
            f"retrieval.model {settings.model!r}: unknown; known models: "
            + ", ".join(sorted(MODELS))
        )
    with _LOCK:
        return _load(settings.model, settings.dim)


_NOTED = False


def noted_marker() -> Path:
    """The file whose presence means ``semantic_note`` has said its note on this machine:
    ``words-only-noted`` beside ``models_dir()`` (the user's cache folder, never a workspace:
    read commands write nothing there)."""
    return models_dir().parent / "words-only-noted"


def semantic_note(settings: RetrievalSettings, emit: Callable[[str], Any]) -> None:
    """Call ``emit(MISSING_EXTRA + ...)`` once when the extra is missing and ``semantic`` is
    not "off" (issue 40: "everything works by words and says so once"): once per process, and
    once per user (``noted_marker``; a fresh-user review: every ``import`` and one-shot
    ``search`` of the quick start, installed without the extra, said it again). The note
    says that ``continuity doctor`` tells it at any time; a marker that cannot be written
    (a read-only cache) leaves it said once per process."""
    global _NOTED
    if _NOTED or settings.semantic == "off" or semantic_available():
        return
    _NOTED = True
    marker = noted_marker()
    if marker.exists():
        return
    emit(f"{MISSING_EXTRA} (said once; `continuity doctor` says it again)")
    try:
        marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        marker.touch(mode=0o600)
    except OSError:
        pass


def fetch_model(
    name: str,
    *,
    progress: Callable[[int, int], Any] | None = None,
    base_url: str = "https://huggingface.co",
) -> Path:
    """Download the files of model ``name`` (a ``repo`` model of ``MODELS``) into
    ``models_dir()/name`` and return that folder. Each file is written to a temporary name and
    renamed when whole (nothing half-written is ever loaded); ``progress(done_bytes,
    total_bytes)`` is called as bytes arrive; the files are kept only when they load as the
    model. Raises ``InputError`` for an unknown or packaged model, ``ConfigError`` when the
    download fails (naming the URL; "no network?" when the host is unreachable) or what came
    is not the model. A failed or interrupted fetch leaves no part file and no empty folder."""
    spec = MODELS.get(name)
    if spec is None or spec.repo is None:
        raise InputError(
            f"model {name!r}: not a model to fetch; fetchable: "
            + ", ".join(sorted(k for k, v in MODELS.items() if v.repo))
        )
    folder = models_dir() / name
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    parts: dict[Path, Path] = {}
    try:
        for rel in (spec.tokenizer, spec.weights):
            target = folder / rel
            if target.is_file():
                continue
            part = target.with_name(target.name + ".part")
            parts[target] = part
            _download(f"{base_url.rstrip('/')}/{spec.repo}/resolve/main/{rel}", part, progress)
        # Nothing is kept that does not load as the model (a proxy's HTML page, a cut file).
        _open(
            spec,
            spec.dim,
            parts.get(folder / spec.weights, folder / spec.weights),
            parts.get(folder / spec.tokenizer, folder / spec.tokenizer),
        )
        for target, part in parts.items():
            os.replace(part, target)
    except BaseException:
        for part in parts.values():
            part.unlink(missing_ok=True)
        if made and not any(folder.iterdir()):
            folder.rmdir()
        raise
    _load.cache_clear()
    return folder


def _download(url: str, part: Path, progress: Callable[[int, int], Any] | None) -> None:
    """``url`` into ``part`` (``progress(done, total)`` per chunk). ``ConfigError`` naming the
    URL on failure."""
    import httpx

    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60) as response:
            response.raise_for_status()
            total = int(response.headers.get("content-length") or 0)
            done = 0
            with open(part, "wb") as out:
                for chunk in response.iter_bytes(1 << 20):
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total)
    except httpx.ConnectError as exc:
        raise ConfigError(
            f"fetching {url}: cannot reach {httpx.URL(url).host} (no network? {exc})"
        ) from exc
    except (httpx.HTTPError, OSError) as exc:
        raise ConfigError(f"fetching {url}: {exc}") from exc
