"""The offline providers: a rule-based LLM and hashed embeddings, shipped in the package.

They let `gligabao serve` do its main job with no provider key (GB_LLM_PROVIDER=offline,
GB_EMBEDDING_PROVIDER=offline, chosen by `serve` when no key is set): remember extracts plain
declarative sentences, query answers from the retrieved facts. Nothing is downloaded and nothing
leaves the machine. They are a way to see the product work, not a substitute for real models:
docs/providers.md quotes their measured precision and recall (bench/offline_extractor.py).
"""
