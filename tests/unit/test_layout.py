"""The package's shape, held by a test: modules stay small, functions take few parameters, imports form no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "cdcsync"
MAX_LINES = 400
MAX_PARAMS = 6


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _is_cli_command(fn: ast.FunctionDef) -> bool:
    """Typer declares each command-line option as a parameter: a command's signature is its option list."""
    return any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in ("command", "callback")
               for d in fn.decorator_list)


def test_no_module_is_over_400_lines():
    long = {name: n for name, path in _modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_function_takes_more_than_6_parameters():
    wide = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or _is_cli_command(node):
                continue
            a = node.args
            params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]
            params += [p.arg for p in (a.vararg, a.kwarg) if p]
            if len(params) > MAX_PARAMS:
                wide.append(f"{name}.{node.name}({', '.join(params)})")
    assert not wide, "functions with more than 6 parameters besides self:\n" + "\n".join(wide)


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the package this one imports, at any depth of its code (deferred imports count too)."""
    out = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base
                                                                                                   else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        out |= {t for t in targets if t in known and t != name}
    return out


def test_no_import_cycle():
    mods = _modules()
    graph = {name: _imports(name, path, set(mods)) for name, path in mods.items()}
    # a package's __init__ re-exporting its modules is not a cycle with them
    graph = {n: {m for m in deps if not (m.startswith(n + ".") or n.startswith(m + ".") and m in _packages(mods))}
             for n, deps in graph.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def _packages(mods: dict[str, Path]) -> set[str]:
    return {n for n, p in mods.items() if p.name == "__init__.py"}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


# the layers the batch flows through, top down (entry points first): a package imports only packages below it
# (deferred and type-only imports count); the rest of cdcsync/ (formats, schema, sinks, kafka, …) sits below them all
LAYERS = (("__main__", "_submit"), ("cli",), ("engine",), ("stages", "runtime"), ("model",))


def test_layers_import_only_downward():
    mods = _modules()
    rank = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}

    def layer(module: str) -> int | None:
        parts = module.split(".")
        return rank.get(parts[1]) if len(parts) > 1 else None

    upward = []
    for name, path in mods.items():
        here = layer(name)
        for dep in sorted(_imports(name, path, set(mods))):
            there = layer(dep)
            if there is not None and (here is None or there < here):
                upward.append(f"{name} imports {dep}")
    assert not upward, "imports that climb back up the layers " + str(LAYERS) + ":\n" + "\n".join(upward)
