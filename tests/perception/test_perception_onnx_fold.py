"""Folding the OCR models' elementwise layers into their convolutions: exact, and used by the OCR."""

from __future__ import annotations

import builtins
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
import rapidocr_onnxruntime
from onnx import TensorProto, helper, numpy_helper

from mae.device.virtual import VirtualPhone
from mae.perception import ocr as ocr_module
from mae.perception.ocr import RapidOcrBackend
from mae.perception.onnx_fold import fold_model

MODELS = Path(rapidocr_onnxruntime.__file__).parent / "models"


def _const(name: str, value: Any) -> onnx.NodeProto:
    array = np.asarray(value, dtype=np.float32)
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name + "_v"))


def _lcnet_like(opset: int) -> bytes:
    """conv → ×s → +b → hard-swish → ×s → +b → 1×1 conv, then ×s → +b → padded 3×3 conv (the affine
    cannot move into it), then a sigmoid × 1 (an identity)."""
    rng = np.random.default_rng(1)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b1"),
        numpy_helper.from_array(rng.standard_normal((6, 8, 1, 1)).astype(np.float32), "w2"),
        numpy_helper.from_array(rng.standard_normal(6).astype(np.float32), "b2"),
        numpy_helper.from_array(rng.standard_normal((6, 1, 3, 3)).astype(np.float32), "w3"),
    ]
    nodes = [
        *(_const(n, v) for n, v in [("s1", [1.3]), ("t1", [-0.2]), ("three", [3.0]), ("zero", 0.0)]),
        *(_const(n, v) for n, v in [("six", 6.0), ("six1", [6.0]), ("s2", [-0.7]), ("t2", [0.4])]),
        *(_const(n, v) for n, v in [("s3", [0.9]), ("t3", [0.25])]),
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["s1", "c1"], ["m1"]),
        helper.make_node("Add", ["m1", "t1"], ["a1"]),
        helper.make_node("Add", ["a1", "three"], ["h1"]),
        helper.make_node("Clip", ["h1", "zero", "six"], ["h2"]),
        helper.make_node("Mul", ["a1", "h2"], ["h3"]),
        helper.make_node("Div", ["h3", "six1"], ["h4"]),
        helper.make_node("Mul", ["s2", "h4"], ["m2"]),
        helper.make_node("Add", ["m2", "t2"], ["a2"]),
        helper.make_node("Conv", ["a2", "w2", "b2"], ["c2"]),
        helper.make_node("Mul", ["c2", "s3"], ["m3"]),
        helper.make_node("Relu", ["m3"], ["r3"]),
        helper.make_node("Mul", ["r3", "s3"], ["m4"]),
        helper.make_node("Add", ["m4", "t3"], ["a4"]),
        helper.make_node("Conv", ["a4", "w3"], ["c3"], pads=[1, 1, 1, 1], group=6),
        _const("one", [1.0]),
        helper.make_node("Sigmoid", ["c3"], ["p3"]),
        helper.make_node("Mul", ["p3", "one"], ["y"]),
    ]
    return _model(nodes, inits, [1, 3, 12, 20], [1, 6, 12, 20], opset)


def _model(
    nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], given: list[int], gives: list[int], opset: int
) -> bytes:
    """A float model of ``nodes`` reading ``x`` of shape ``given`` and giving ``y`` of shape ``gives``."""
    graph = helper.make_graph(
        nodes,
        "model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, given)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, gives)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model.SerializeToString()


def _run(model: bytes, x: np.ndarray) -> np.ndarray:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {session.get_inputs()[0].name: x})[0])


@pytest.mark.parametrize("opset", [12, 14])
def test_folding_is_exact_and_removes_the_elementwise_layers(opset: int) -> None:
    model = _lcnet_like(opset)
    folded, rewrites = fold_model(model)
    result = onnx.load_from_string(folded)
    ops = Counter(n.op_type for n in result.graph.node)
    assert rewrites == 5
    assert ops["Clip"] == 0 and ops["Div"] == 0 and ops["HardSigmoid"] == 0 and ops["HardSwish"] == 1
    # The affine before the padded depthwise convolution is one per-channel BatchNormalization (folding
    # its shift would change the border, where the convolution reads zero padding, not the shifted
    # value); the identity is left to onnxruntime.
    assert ops["BatchNormalization"] == 1 and ops["Add"] == 0 and ops["Mul"] == 1
    assert max(o.version for o in result.opset_import if o.domain in ("", "ai.onnx")) >= 14
    x = np.random.default_rng(2).standard_normal((1, 3, 12, 20)).astype(np.float32)
    np.testing.assert_allclose(_run(folded, x), _run(model, x), rtol=1e-4, atol=1e-4)


def _fpn_like(pooled_gate: bool) -> bytes:
    """A squeeze-and-excitation gate with its shortcut (x + x · s), then an upsampling head: a
    transposed convolution, + b per channel, a BatchNormalization, a ReLU."""
    rng = np.random.default_rng(4)

    def init(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    inits = [
        init("w1", 8, 3, 1, 1),
        init("wt", 8, 4, 2, 2),
        numpy_helper.from_array(rng.standard_normal((1, 4, 1, 1)).astype(np.float32), "bt"),
        init("gamma", 4),
        init("beta", 4),
        init("mean", 4),
        numpy_helper.from_array(rng.random(4).astype(np.float32) + 0.5, "variance"),
    ]
    pooled = "pooled" if pooled_gate else "x1"
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["x1"]),
        helper.make_node("GlobalAveragePool", ["x1"], ["pooled"]),
        helper.make_node("Sigmoid", [pooled], ["gate"]),
        helper.make_node("Mul", ["x1", "gate"], ["gated"]),
        helper.make_node("Add", ["gated", "x1"], ["shortcut"]),
        helper.make_node("ConvTranspose", ["shortcut", "wt"], ["up"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["up", "bt"], ["biased"]),
        helper.make_node("BatchNormalization", ["biased", "gamma", "beta", "mean", "variance"], ["n"]),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    return _model(nodes, inits, [1, 3, 10, 14], [1, 4, 20, 28], 14)


def test_a_gate_shortcut_is_one_multiply_and_the_head_one_transposed_convolution() -> None:
    model = _fpn_like(pooled_gate=True)
    folded, rewrites = fold_model(model)
    ops = Counter(n.op_type for n in onnx.load_from_string(folded).graph.node)
    # x + x·s → x·(s + 1): the + 1 is on the 1×1 gate, not a pass over the map; the bias Add and the
    # BatchNormalization after the transposed convolution are in its weights and bias.
    assert rewrites == 3
    assert ops == Counter(
        {"Conv": 1, "GlobalAveragePool": 1, "Sigmoid": 1, "Add": 1, "Mul": 1, "ConvTranspose": 1, "Relu": 1}
    )
    x = np.random.default_rng(5).standard_normal((1, 3, 10, 14)).astype(np.float32)
    np.testing.assert_allclose(_run(folded, x), _run(model, x), rtol=1e-5, atol=1e-5)


def test_a_shortcut_around_a_full_size_product_is_left_alone() -> None:
    model = _fpn_like(pooled_gate=False)  # x + x·σ(x): the "gate" is a map, adding 1 to it costs a pass
    folded, rewrites = fold_model(model)
    ops = Counter(n.op_type for n in onnx.load_from_string(folded).graph.node)
    assert rewrites == 2 and ops["Mul"] == 1 and ops["Add"] == 1 and ops["BatchNormalization"] == 0
    x = np.random.default_rng(6).standard_normal((1, 3, 10, 14)).astype(np.float32)
    np.testing.assert_allclose(_run(folded, x), _run(model, x), rtol=1e-5, atol=1e-5)


def _head(group: int = 1, bias_shape: tuple[int, ...] = (1, 4, 1, 1), shown: bool = False) -> bytes:
    """x → a transposed convolution with a bias → + b → a BatchNormalization with a tiny variance and
    no epsilon attribute (its default, 1e-5, counts) → y; ``shown`` also makes the transposed
    convolution's output a graph output."""
    rng = np.random.default_rng(9)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 4 // group, 2, 2)).astype(np.float32), "wt"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "bias"),
        numpy_helper.from_array(rng.standard_normal(bias_shape).astype(np.float32), "b"),
        *(numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), n) for n in ("g", "beta", "m")),
        numpy_helper.from_array(np.full(4, 1e-5, np.float32), "v"),
    ]
    nodes = [
        helper.make_node("ConvTranspose", ["x", "wt", "bias"], ["up"], strides=[2, 2], group=group),
        helper.make_node("Add", ["b", "up"], ["biased"]),
        helper.make_node("BatchNormalization", ["biased", "g", "beta", "m", "v"], ["y"]),
    ]
    model = onnx.load_from_string(_model(nodes, inits, [1, 4, 6, 8], [1, 4, 12, 16], 14))
    if shown:
        model.graph.output.append(helper.make_tensor_value_info("up", TensorProto.FLOAT, [1, 4, 12, 16]))
    return model.SerializeToString()


@pytest.mark.parametrize(
    ("model", "rewrites"),
    [
        (_head(), 2),  # + b and the normalisation: both in the weights and bias
        (_head(group=2), 0),  # grouped: left to onnxruntime
        (_head(bias_shape=(1, 1, 1, 16)), 0),  # + b per column, not per channel
        (_head(shown=True), 0),  # the output before + b is wanted too
    ],
)
def test_what_follows_a_transposed_convolution_folds_only_when_exact(model: bytes, rewrites: int) -> None:
    folded, made = fold_model(model)
    assert made == rewrites
    ops = [n.op_type for n in onnx.load_from_string(folded).graph.node]
    assert ops == (["ConvTranspose"] if rewrites else ["ConvTranspose", "Add", "BatchNormalization"])
    x = np.random.default_rng(10).standard_normal((1, 4, 6, 8)).astype(np.float32)
    session = onnxruntime.InferenceSession(folded, providers=["CPUExecutionProvider"])
    original = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": x}), original.run(None, {"x": x}), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)  # ×300 by the tiny variance


@pytest.mark.parametrize(
    ("name", "shape"),
    [("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320)), ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 320, 256))],
)
def test_the_bundled_ocr_models_fold_exactly(name: str, shape: tuple[int, ...]) -> None:
    model = (MODELS / name).read_bytes()
    folded, rewrites = fold_model(model)
    ops = Counter(n.op_type for n in onnx.load_from_string(folded).graph.node)
    assert rewrites > 50 and ops["Clip"] == 0  # every hard-swish rewritten
    added = [
        n
        for n in onnx.load_from_string(folded).graph.node
        if n.op_type == "BatchNormalization" and helper.get_attribute_value(n.attribute[0]) == 0.0
    ]
    assert ops["HardSwish"] >= 24 and len(added) >= 14  # the affines before padded convolutions
    if "det" in name:  # the feature pyramid's gates; the head's transposed convolutions absorb what follows
        nodes = onnx.load_from_string(folded).graph.node
        assert len([n for n in nodes if n.name.endswith("_raise")]) == 8
        after = {
            n.op_type for n in nodes for t in nodes if t.op_type == "ConvTranspose" and t.output[0] in n.input
        }
        assert after == {"Relu", "Sigmoid"}
    x = np.random.default_rng(3).random(shape).astype(np.float32)
    np.testing.assert_allclose(_run(folded, x), _run(model, x), rtol=1e-3, atol=1e-4)


def test_without_onnx_the_models_load_as_shipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_import = builtins.__import__

    def no_onnx(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "onnx" or name.startswith("onnx."):
            raise ImportError("No module named 'onnx'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnx)
    ocr_module._folded.cache_clear()
    path = str(MODELS / "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    with caplog.at_level(logging.WARNING, logger="mae.perception.ocr"):
        assert ocr_module._folded(path) == path
    assert "unfolded" in caplog.text
    ocr_module._folded.cache_clear()


def test_the_ocr_reads_the_same_lines_folded_and_unfolded() -> None:
    phone = VirtualPhone()
    phone.open_app("Walmart")
    screen = np.asarray(phone.screenshot().convert("RGB"))
    folded = RapidOcrBackend(rec_cache=0).read(screen)
    plain = RapidOcrBackend(rec_cache=0, fold=False).read(screen)
    assert len(folded) > 10
    assert [(e.text, e.box) for e in folded] == [(e.text, e.box) for e in plain]


@pytest.mark.parametrize(
    ("element", "shape", "scalar_shape"),
    [
        (TensorProto.INT64, [1, 4, 3, 3], [1]),  # not float: a BatchNormalization would not load
        (TensorProto.DOUBLE, [1, 4, 3, 3], [1]),
        (TensorProto.FLOAT, [1, 4, 3, 3], [1, 1, 1, 1, 1]),  # the product gains a dimension
    ],
)
def test_affines_a_batchnorm_cannot_stand_for_are_left_alone(
    element: int, shape: list[int], scalar_shape: list[int]
) -> None:
    kind = helper.tensor_dtype_to_np_dtype(element)
    scalar = numpy_helper.from_array(np.full(scalar_shape, 2, kind), "s")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["y"])],
        "affine",
        [helper.make_tensor_value_info("x", element, shape)],
        [helper.make_tensor_value_info("y", element, None)],
        [scalar],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7
    folded, rewrites = fold_model(model.SerializeToString())
    assert rewrites == 0
    assert [n.op_type for n in onnx.load_from_string(folded).graph.node] == ["Mul"]


def test_a_folded_model_onnxruntime_cannot_load_runs_unfolded(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Bytes onnxruntime refuses, as an older release refuses an operator the fold uses
    monkeypatch.setattr(ocr_module, "_folded", lambda path: b"not a model this onnxruntime loads")
    monkeypatch.setattr(ocr_module, "_ENGINES", {})  # load fresh engines, and forget them after
    with caplog.at_level(logging.WARNING, logger="mae.perception.ocr"):
        backend = RapidOcrBackend(rec_cache=0, rec_workers=1)
    assert caplog.text.count("cannot load them folded") == 2  # the detector and the recogniser
    phone = VirtualPhone()
    phone.open_app("Walmart")
    assert len(backend.read(np.asarray(phone.screenshot().convert("RGB")))) > 10
