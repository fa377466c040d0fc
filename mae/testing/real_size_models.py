"""Randomly initialised checkpoints in the exact shapes of the Perceptor's real local models.

``IDEA-Research/grounding-dino-tiny`` (Swin-T + BERT-base, 900 queries; transformers' default
``GroundingDinoConfig``) and ``Qwen/Qwen2.5-VL-3B-Instruct`` (36 text layers of width 2048, 151,936-token
vocabulary, a 32-block vision tower), written in the hub layout so that mae's own loaders read them.
Random weights compute exactly as much as the real ones per token, so they time the GPU work without a
download; their outputs are noise. ``layers`` / ``vision_depth`` shrink the depth only (the widths stay
real) for a quick run on a small machine; figures are then not real-size.

The tokenizer is a byte-level one with Qwen's special tokens (``tiny_models.build_qwen_tokenizer``):
prompts are therefore about three times as many tokens as with Qwen's own BPE vocabulary, which makes
prefill slower than the real model's, never faster. Used by ``benchmarks/local_models.py --real-size``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mae.testing.tiny_models import QWEN_SPECIALS, QWEN_TEMPLATE, _name_processor, build_qwen_tokenizer

QWEN_3B_TEXT: dict[str, Any] = {
    "vocab_size": 151936,
    "hidden_size": 2048,
    "intermediate_size": 11008,
    "num_hidden_layers": 36,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "max_position_embeddings": 128000,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
    "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]},
}
"""Qwen2.5-VL-3B-Instruct's language model (its config.json)."""

QWEN_3B_VISION: dict[str, Any] = {
    "depth": 32,
    "hidden_size": 1280,
    "intermediate_size": 3420,
    "num_heads": 16,
    "out_hidden_size": 2048,
    "patch_size": 14,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
    "window_size": 112,
    "fullatt_block_indexes": [7, 15, 23, 31],
}
"""Qwen2.5-VL-3B-Instruct's vision tower."""


def qwen_3b_config(tokenizer: Any, *, layers: int | None = None, vision_depth: int | None = None) -> Any:
    """Qwen2.5-VL-3B-Instruct's ``Qwen2_5_VLConfig`` with ``tokenizer``'s special token ids."""
    from transformers import Qwen2_5_VLConfig

    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_SPECIALS}
    text = {
        **QWEN_3B_TEXT,
        "bos_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "pad_token_id": ids["<|endoftext|>"],
    }
    vision = dict(QWEN_3B_VISION)
    if layers is not None:
        text["num_hidden_layers"] = layers
    if vision_depth is not None:
        vision["depth"] = vision_depth
        vision["fullatt_block_indexes"] = [i for i in vision["fullatt_block_indexes"] if i < vision_depth]
    return Qwen2_5_VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=True,
    )


def build_real_size_groundingdino(directory: Path, *, device: str = "cpu") -> Path:
    """A random GroundingDINO with grounding-dino-tiny's shapes (172M parameters), saved in half
    precision with a BERT-base-sized vocabulary and the real image processor settings (800-1333 px)."""
    import torch
    from transformers import BertTokenizer, GroundingDinoConfig, GroundingDinoForObjectDetection
    from transformers.models.grounding_dino.image_processing_pil_grounding_dino import (
        GroundingDinoImageProcessorPil,
    )

    directory.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    with torch.device(device):
        model = GroundingDinoForObjectDetection(GroundingDinoConfig()).eval()
    model.to(torch.float16).save_pretrained(directory)
    del model
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "icon", ".", "button", "app", "a", "the"]
    filler = [f"[unused{i}]" for i in range(30522 - len(words))]
    (directory / "vocab.txt").write_text("\n".join(words + filler) + "\n")
    BertTokenizer(vocab_file=str(directory / "vocab.txt"), do_lower_case=True).save_pretrained(directory)
    GroundingDinoImageProcessorPil(size={"shortest_edge": 800, "longest_edge": 1333}).save_pretrained(
        directory
    )
    _name_processor(directory, "GroundingDinoImageProcessor", "GroundingDinoProcessor")
    return directory


def build_real_size_qwen(
    directory: Path, *, device: str = "cpu", layers: int | None = None, vision_depth: int | None = None
) -> Path:
    """A random Qwen2.5-VL with Qwen2.5-VL-3B-Instruct's shapes (3.75B parameters, 7.5 GB in bfloat16),
    saved in bfloat16 with tokenizer, image processor (the real pixel limits) and chat template.
    ``layers`` / ``vision_depth``: fewer text layers / vision blocks (same widths), for a quick run."""
    import torch
    from transformers import GenerationConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = build_qwen_tokenizer()
    config = qwen_3b_config(tokenizer, layers=layers, vision_depth=vision_depth)
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)  # built in bfloat16: half the memory of float32
    try:
        with torch.device(device):
            model = Qwen2_5_VLForConditionalGeneration(config).eval()
    finally:
        torch.set_default_dtype(previous)
    model.generation_config = GenerationConfig(
        eos_token_id=config.text_config.eos_token_id, pad_token_id=config.text_config.pad_token_id
    )
    model.save_pretrained(directory)
    del model
    tokenizer.save_pretrained(directory)
    Qwen2VLImageProcessorPil(min_pixels=56 * 56, max_pixels=28 * 28 * 16384).save_pretrained(directory)
    _name_processor(directory, "Qwen2VLImageProcessor", "Qwen2_5_VLProcessor")
    (directory / "chat_template.json").write_text(json.dumps({"chat_template": QWEN_TEMPLATE}))
    return directory


__all__ = [
    "QWEN_3B_TEXT",
    "QWEN_3B_VISION",
    "build_real_size_groundingdino",
    "build_real_size_qwen",
    "qwen_3b_config",
]
