-- The prompt cache's share of a call's input, beside its cost.
--
-- Calls are priced as the gligabao server prices them: input written to the prompt cache and input
-- read from it cost their own prices (Anthropic's cache_creation_input_tokens and
-- cache_read_input_tokens; OpenAI's prompt_tokens_details.cached_tokens). input_tokens stays the
-- whole input; these two say how much of it the cache wrote and read, so that a row's cost can be
-- checked against the price table. Null for the rows before them and for providers that say nothing.
ALTER TABLE gb_inferences
    ADD COLUMN cache_write_tokens integer,
    ADD COLUMN cache_read_tokens integer;
