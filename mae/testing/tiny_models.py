"""Tiny randomly initialised local models in the layout of the real hub repositories.

GroundingDINO (Swin + BERT) and Qwen2.5-VL checkpoints of a few thousand parameters, written with
config.json, safetensors weights, processor files, tokenizer and chat template, so the code that loads
IDEA-Research/grounding-dino-tiny or Qwen/Qwen2.5-VL-3B-Instruct loads them too. Random weights give
random boxes and gibberish text: they test plumbing and speed of the code around the model, not quality.
Used by the tests and by ``benchmarks/local_models.py``; needs torch and transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

QWEN_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
DINO_QUERIES = 30


def _name_processor(directory: Path, image_processor_type: str, processor_class: str) -> None:
    """Make preprocessor_config.json read like the hub's (class names without backend suffixes)."""
    path = directory / "preprocessor_config.json"
    data = json.loads(path.read_text())
    data["image_processor_type"] = image_processor_type
    data["processor_class"] = processor_class
    path.write_text(json.dumps(data, indent=2))


def build_tiny_groundingdino(directory: Path) -> Path:
    """A random GroundingDINO (Swin + BERT, a few thousand parameters) with its processor files."""
    from transformers import BertTokenizer, GroundingDinoConfig, GroundingDinoForObjectDetection
    from transformers.models.grounding_dino.image_processing_pil_grounding_dino import (
        GroundingDinoImageProcessorPil,
    )

    directory.mkdir(parents=True, exist_ok=True)
    import torch

    torch.manual_seed(0)
    backbone = {
        "model_type": "swin",
        "image_size": 64,
        "patch_size": 4,
        "embed_dim": 8,
        "depths": [1, 1, 1, 1],
        "num_heads": [1, 1, 1, 1],
        "window_size": 2,
        "out_features": ["stage2", "stage3", "stage4"],
    }
    text = {
        "model_type": "bert",
        "vocab_size": 16,
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 64,
    }
    config = GroundingDinoConfig(
        backbone_config=backbone,
        text_config=text,
        num_queries=DINO_QUERIES,
        d_model=32,  # the model's GroupNorm(32, d_model) needs a multiple of 32
        encoder_layers=1,
        decoder_layers=2,  # the box heads of decoder layers 1.. are tied to layer 0's
        encoder_ffn_dim=16,
        decoder_ffn_dim=16,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_n_points=1,
        decoder_n_points=1,
        max_text_len=32,
    )
    GroundingDinoForObjectDetection(config).eval().save_pretrained(directory)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "icon", ".", "button", "app", "a", "the"]
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizer(vocab_file=str(directory / "vocab.txt"), do_lower_case=True).save_pretrained(directory)
    GroundingDinoImageProcessorPil(size={"shortest_edge": 64, "longest_edge": 128}).save_pretrained(directory)
    _name_processor(directory, "GroundingDinoImageProcessor", "GroundingDinoProcessor")
    return directory


def build_qwen_tokenizer() -> Any:
    """A byte-level tokenizer (any text round-trips) with Qwen's special tokens and a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    core = Tokenizer(models.BPE(vocab={symbol: i for i, symbol in enumerate(alphabet)}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(QWEN_SPECIALS)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.chat_template = QWEN_TEMPLATE
    return tokenizer


def build_tiny_qwen(directory: Path) -> Path:
    """A random Qwen2.5-VL (one text layer, two vision blocks) with tokenizer and image processor."""
    from transformers import GenerationConfig, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = build_qwen_tokenizer()
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_SPECIALS}
    text = {
        "vocab_size": 272,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
        "bos_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "pad_token_id": ids["<|endoftext|>"],
    }
    vision = {
        "depth": 2,
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_heads": 2,
        "out_hidden_size": 32,
        "fullatt_block_indexes": [1],
        "window_size": 56,
    }
    config = Qwen2_5_VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    import torch

    torch.manual_seed(0)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config = GenerationConfig(
        eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"]
    )
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    Qwen2VLImageProcessorPil(min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 64).save_pretrained(directory)
    _name_processor(directory, "Qwen2VLImageProcessor", "Qwen2_5_VLProcessor")
    (directory / "chat_template.json").write_text(json.dumps({"chat_template": QWEN_TEMPLATE}))
    return directory
