# syntax=docker/dockerfile:1
# The MLflow tracking server of the team stack: MLflow plus the PostgreSQL driver
# (backend store) and boto3 (S3 artifact store). Nothing of docevals is needed here.
# Built by docker/compose.yaml (service `mlflow`); see docs/deployment.md.
FROM python:3.11-slim

ARG MLFLOW_VERSION=3.17.2

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MLFLOW_DISABLE_TELEMETRY=true \
    DO_NOT_TRACK=true

RUN python -m pip install "mlflow==${MLFLOW_VERSION}" "psycopg2-binary>=2.9,<3" "boto3>=1.34,<2" \
    && useradd --uid 10001 --create-home --shell /usr/sbin/nologin mlflow

USER mlflow
WORKDIR /home/mlflow
EXPOSE 5000
# The command line (store, artifacts, allowed hosts) is in docker/compose.yaml.
CMD ["mlflow", "server", "--help"]
