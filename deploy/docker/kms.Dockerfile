# The KMS: PyKMIP (pinned in kms/requirements.txt) and the kms CLI. The environment is made by the
# Makefile's venv target, as CI makes it, limited to the KMS's requirements.
FROM python:3.11.13-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
WORKDIR /fle
COPY Makefile ./
COPY kms/requirements.txt kms/requirements.txt
RUN make venv VENV=/opt/venv PY_REQUIREMENTS=kms/requirements.txt
COPY kms/ kms/
COPY deploy/docker/kms-entrypoint.sh /usr/local/bin/kms-entrypoint
ENV FLE_KMS_PYTHON=/opt/venv/bin/python PATH=/fle/kms:$PATH
EXPOSE 5696
ENTRYPOINT ["kms-entrypoint"]
