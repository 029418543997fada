# The server image: python -m server on 0.0.0.0:8080; set DATABASE_URL to a PostgreSQL URL.
FROM python:3.11-slim
WORKDIR /app
# setup.py's build step copies the top-level migrations/ and openapi.yaml into the package.
COPY pyproject.toml setup.py MANIFEST.in README.md openapi.yaml ./
COPY migrations ./migrations
COPY server ./server
RUN pip install --no-cache-dir .
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
USER nobody
CMD ["python", "-m", "server"]
