# The server image: python -m server on 0.0.0.0:8080; set DATABASE_URL to a PostgreSQL URL.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY server ./server
RUN pip install --no-cache-dir .
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
USER nobody
CMD ["python", "-m", "server"]
