"""Run by the SAM CLI's own Python (.venv-tools), not by pytest: prints, as JSON, the environment
`sam local invoke` / `sam local start-api --env-vars <file>` gives each function of a template,
resolved by SAM's own classes (the stack and function providers, LocalLambdaRunner's env vars).

    .venv-tools/bin/python tests/sam_local_env.py template.yaml env.json
"""

import json
import os
import sys

from samcli.commands.local.lib.local_lambda import LocalLambdaRunner
from samcli.lib.providers.sam_function_provider import SamFunctionProvider
from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider


def main(template: str, env_file: str) -> None:
    root = os.path.dirname(os.path.abspath(template))
    stacks, _ = SamLocalStackProvider.get_stacks(template)
    functions = SamFunctionProvider(stacks)
    with open(env_file, encoding="utf-8") as file:
        overrides = json.load(file)
    runner = LocalLambdaRunner(
        local_runtime=None, function_provider=functions, cwd=root, real_path=root, env_vars_values=overrides
    )
    resolved = {function.name: runner._make_env_vars(function).resolve() for function in functions.get_all()}
    json.dump(resolved, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:3])
