"""The real-size random checkpoints have the real models' shapes (counted on torch's meta device:
nothing is allocated, so this is fast)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="needs torch (requirements-dev.txt)")
transformers = pytest.importorskip("transformers", reason="needs transformers")

from mae.testing.real_size_models import qwen_3b_config  # noqa: E402
from mae.testing.tiny_models import build_qwen_tokenizer  # noqa: E402


def _parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_the_captioner_has_qwen2_5_vl_3bs_shapes() -> None:
    config = qwen_3b_config(build_qwen_tokenizer())
    with torch.device("meta"):
        model = transformers.Qwen2_5_VLForConditionalGeneration(config)
    # Qwen/Qwen2.5-VL-3B-Instruct: 3,754,622,976 parameters (lm_head tied to the embeddings)
    assert _parameters(model) == 3_754_622_976
    assert model.config.text_config.num_hidden_layers == 36 and model.config.vision_config.depth == 32
    shrunk = qwen_3b_config(build_qwen_tokenizer(), layers=1, vision_depth=1)
    assert shrunk.text_config.hidden_size == 2048 and shrunk.vision_config.fullatt_block_indexes == []


def test_the_detector_has_grounding_dino_tinys_shapes() -> None:
    with torch.device("meta"):
        model = transformers.GroundingDinoForObjectDetection(transformers.GroundingDinoConfig())
    # IDEA-Research/grounding-dino-tiny: about 172 M parameters (Swin-T, BERT-base, 900 queries)
    assert 170e6 < _parameters(model) < 175e6
    assert model.config.num_queries == 900 and model.config.backbone_config.embed_dim == 96
