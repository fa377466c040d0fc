# mae on a GPU workstation: the demo and CLI with the Perceptor's local models (GroundingDINO, local
# captions) on CUDA, and adb for a phone on USB (through the host's adb server) or Wi-Fi.
# The backbone VLM runs beside it in vLLM's own image: see docker-compose.yml and README "GPU workstation".
#
#   docker build -t mae:gpu .
#   docker run --gpus all -p 127.0.0.1:7860:7860 -e MAE_BACKBONE=openai -e OPENAI_API_KEY mae:gpu
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
FROM ${CUDA_IMAGE}

# torch wheel index matching the CUDA base (cu128 for CUDA 12.8), and the GPU extras of the Perceptor
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128
ARG TORCH_VERSION=2.8.0
ARG GPU_EXTRAS="transformers>=4.49 accelerate>=0.30 qwen-vl-utils>=0.0.8"

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# adb for phones; libgl/libglib for OpenCV and onnxruntime
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv adb libgl1 libglib2.0-0 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv

WORKDIR /app
COPY requirements.txt ./
RUN pip install "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX_URL}" \
    && pip install -r requirements.txt ${GPU_EXTRAS}

COPY . /app
RUN pip install --no-deps . \
    && useradd --create-home --uid 1000 mae \
    && mkdir -p /data /models \
    && chown -R mae:mae /data /models

USER 1000:1000
ENV MAE_LOG_DIR=/data/runs \
    MAE_MEMORY_DIR=/data/memory \
    MAE_MODELS_DIR=/models \
    HF_HOME=/models/huggingface \
    MAE_APP=/app/app.py \
    GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860
VOLUME ["/data", "/models"]
EXPOSE 7860

HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 CMD ["/app/docker/healthcheck.sh"]
ENTRYPOINT ["/app/docker/entrypoint.sh"]
CMD ["demo"]
