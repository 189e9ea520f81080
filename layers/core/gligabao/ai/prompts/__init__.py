"""The prompts of each LLM stage, each beside the pydantic model of the reply it expects."""
