"""Shared fixtures for the unit tests: a tiny Korean tokenizer, tiny random-weight MiniMind
checkpoints saved as .pth, and paths to optional external material (MiniMind's real tokenizer in
../shared/fixtures, MiniMind's own source for the ``minimind`` backend); session-scoped and small
(hidden 64, 2 layers, vocab ~600).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from mminfer.demo.corpus import CorpusSpec, build_corpus, tokenizer_training_texts
from mminfer.demo.tokenizer_train import train_tokenizer
from mminfer.model.loading import LoadedModel, ModelSpec, load_model, run_info, save_state_dict
from mminfer.model.tokenizer import Tokenizer, load_tokenizer
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM
from mminfer.records import ChatPrompt, PretrainPrompt, RunInfo

TINY_VOCAB_TARGET = 600
TINY_MAX_POSITIONS = 512
TINY_SHAPE = {"hidden_size": 64, "num_hidden_layers": 2}
TINY_SHAPE |= {"num_attention_heads": 4, "num_key_value_heads": 2}


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    """Tiny models run fastest on one thread (and the CI machine's cores are shared)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def umask():
    """umask(0o027) sets the process's umask for the rest of the test (the old one after)."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


@pytest.fixture
def immutable_folder(tmp_path):
    """A folder nobody, root included, may write into (chattr +i); skipped where chattr fails."""
    folder = tmp_path / "locked"
    folder.mkdir()
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"chattr +i is not allowed here: {made.stderr.decode().strip()}")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.fixture(scope="session")
def tiny_corpus():
    return build_corpus(CorpusSpec(seed=0, train_docs=200, val_docs=10, sft_conversations=50))


@pytest.fixture(scope="session")
def tiny_tokenizer_dir(tiny_corpus, tmp_path_factory) -> Path:
    """A folder with tokenizer.json + tokenizer_config.json (byte-level BPE, ids 0/1/2 special)."""
    out = tmp_path_factory.mktemp("tiny-tokenizer")
    return train_tokenizer(tokenizer_training_texts(tiny_corpus), TINY_VOCAB_TARGET, out)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_tokenizer_dir) -> Tokenizer:
    return load_tokenizer(tiny_tokenizer_dir)


@pytest.fixture(scope="session")
def tiny_config(tiny_tokenizer) -> MiniMindConfig:
    vocab = tiny_tokenizer.vocab_size
    return MiniMindConfig(
        **TINY_SHAPE, vocab_size=vocab, max_position_embeddings=TINY_MAX_POSITIONS
    )


def _save_random_model(config: MiniMindConfig, path: Path, seed: int) -> Path:
    torch.manual_seed(seed)
    model = MiniMindForCausalLM(config)
    # Spread the (tied) embedding a little so the random model's distributions are not flat:
    # greedy steps then have clear winners and sampling still has many candidates.
    with torch.no_grad():
        model.model.embed_tokens.weight.normal_(0.0, 0.2)
    save_state_dict(model, path)
    return path


@pytest.fixture(scope="session")
def tiny_checkpoint(tiny_config, tmp_path_factory) -> Path:
    """A random-weight 'pretrained' checkpoint (.pth state_dict)."""
    return _save_random_model(tiny_config, tmp_path_factory.mktemp("ckpt") / "pretrain.pth", seed=0)


@pytest.fixture(scope="session")
def tiny_sft_checkpoint(tiny_config, tmp_path_factory) -> Path:
    """A second random-weight checkpoint standing in for the SFT model."""
    return _save_random_model(tiny_config, tmp_path_factory.mktemp("ckpt-sft") / "sft.pth", seed=1)


@pytest.fixture(scope="session")
def load_tiny(tiny_checkpoint):
    """load_tiny(backend='builtin', dtype='float32', path=None, **kw) -> LoadedModel."""

    def load(
        backend: str = "builtin", dtype: str = "float32", path: Path | None = None, **kwargs
    ) -> LoadedModel:
        overrides = {"max_position_embeddings": TINY_MAX_POSITIONS, **kwargs.pop("overrides", {})}
        return load_model(
            path or tiny_checkpoint,
            ModelSpec(backend=backend, device="cpu", dtype=dtype, overrides=overrides, **kwargs),
        )

    return load


@pytest.fixture(scope="session")
def tiny_loaded(load_tiny) -> LoadedModel:
    """The builtin float32 tiny model (shared: tests must not modify it)."""
    return load_tiny()


@pytest.fixture(scope="session")
def tiny_model(tiny_loaded):
    return tiny_loaded.model


@pytest.fixture(scope="session")
def tiny_run(tiny_loaded) -> RunInfo:
    """The provenance a job records for the tiny model."""
    return run_info(tiny_loaded)


# The prompts' provenance, as the jobs record it (the tests build their prompts by hand).
PRETRAIN_PROMPT = PretrainPrompt(tokenizer="tiny", val_data="tiny.jsonl", docs=6, prompt_tokens=20)
CHAT_PROMPT = ChatPrompt("tiny", "tokenizer_config.json", "가람 마을의 특산물은 무엇인가요?", 0, 0)


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """MiniMind's real tokenizer files (only in the development checkout's ../shared folder)."""
    folder = Path(__file__).parents[2] / "shared" / "fixtures" / "minimind-tokenizer"
    if not (folder / "tokenizer.json").is_file():
        pytest.skip(f"MiniMind's tokenizer fixture is absent ({folder})")
    return folder


@pytest.fixture(scope="session")
def minimind_src() -> Path:
    """MiniMind's source folder (MMINFER_MINIMIND_SRC, else /opt/minimind); skips without it or
    without transformers."""
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    folder = Path(os.environ.get("MMINFER_MINIMIND_SRC") or "/opt/minimind")
    if not (folder / "model" / "model_minimind.py").is_file():
        pytest.skip(f"MiniMind's source is absent ({folder}/model/model_minimind.py)")
    return folder


class CachedStepsNudged(torch.nn.Module):
    """A model whose cached path differs: one-token (cached) steps see token 7's logit raised by
    ``nudge``, as if the explicit attention path rounded differently at a near-tie."""

    def __init__(self, inner, nudge: float = 50.0):
        super().__init__()
        self.inner = inner
        self.nudge = nudge

    def forward(self, input_ids, *args, **kwargs):
        outputs = self.inner.forward(input_ids, *args, **kwargs)
        if input_ids.shape[1] == 1:
            outputs.logits[..., 7] += self.nudge
        return outputs

    def generate(self, *args, **kwargs):
        return type(self.inner).generate(self, *args, **kwargs)
