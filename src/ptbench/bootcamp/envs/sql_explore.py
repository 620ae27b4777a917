"""Questions answered by exploring a generated SQLite database with a stateful `sql_query` tool.

Each case names a database seed; the same seed always builds the same database, so the generator
(to compute the answer) and the tool (one private in-memory connection per episode) agree.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from ptbench.bootcamp.api import Generator, Identity, Tool, ToolResult, register_generator, register_tool

_FIRST = [
    "Ada",
    "Ben",
    "Cleo",
    "Dev",
    "Eli",
    "Fay",
    "Gus",
    "Hana",
    "Ivo",
    "Jun",
    "Kai",
    "Lea",
    "Mo",
    "Nia",
    "Oto",
    "Pia",
]
_LAST = ["Abe", "Berg", "Cruz", "Diaz", "Eno", "Fox", "Gray", "Holt", "Ito", "Jain", "Kerr", "Lund", "Moss", "Nagy"]
_DEPTS = ["Sales", "Research", "Support", "Finance", "Legal", "Design", "Ops", "Security"]
_CITIES = ["Oslo", "Lyon", "Porto", "Graz", "Turku", "Ghent"]


def build_db(seed: int, departments: int, employees: int) -> sqlite3.Connection:
    """A deterministic company database: departments(id, name, city), employees(id, name, dept_id, salary, hired)."""
    rng = random.Random(f"sqldb:{seed}")
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL)")
    conn.execute(
        "CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept_id INTEGER REFERENCES "
        "departments(id), salary INTEGER NOT NULL, hired INTEGER NOT NULL)"
    )
    names = rng.sample(_DEPTS, k=min(departments, len(_DEPTS)))
    conn.executemany(
        "INSERT INTO departments VALUES (?, ?, ?)", [(i + 1, n, rng.choice(_CITIES)) for i, n in enumerate(names)]
    )
    people: set[str] = set()
    rows: list[tuple[int, str, int, int, int]] = []
    while len(rows) < employees:
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        if name in people:
            continue
        people.add(name)
        rows.append(
            (
                len(rows) + 1,
                name,
                rng.randint(1, len(names)),
                rng.randrange(30_000, 150_000, 500),
                rng.randint(2005, 2024),
            )
        )
    conn.executemany("INSERT INTO employees VALUES (?, ?, ?, ?, ?)", rows)
    conn.commit()
    return conn


def _questions(conn: sqlite3.Connection, rng: random.Random) -> tuple[str, str, Any]:
    dept = rng.choice([r[0] for r in conn.execute("SELECT name FROM departments ORDER BY id")])
    kind = rng.choice(["count", "total_salary", "top_earner", "earliest_hire"])
    if kind == "count":
        q = f"How many employees work in the {dept} department?"
        ans = conn.execute(
            "SELECT COUNT(*) FROM employees e JOIN departments d ON e.dept_id=d.id WHERE d.name=?", (dept,)
        ).fetchone()[0]
    elif kind == "total_salary":
        q = f"What is the total salary of all employees in the {dept} department?"
        ans = conn.execute(
            "SELECT COALESCE(SUM(salary),0) FROM employees e JOIN departments d ON e.dept_id=d.id WHERE d.name=?",
            (dept,),
        ).fetchone()[0]
    elif kind == "top_earner":
        q = f"Who is the highest-paid employee in the {dept} department? (If nobody works there, answer none.)"
        row = conn.execute(
            "SELECT e.name FROM employees e JOIN departments d ON e.dept_id=d.id WHERE d.name=? ORDER BY salary DESC, "
            "e.id LIMIT 1",
            (dept,),
        ).fetchone()
        ans = row[0] if row else "none"
    else:
        q = f"In which year was the earliest hire of the {dept} department? (If nobody works there, answer none.)"
        ans = conn.execute(
            "SELECT MIN(hired) FROM employees e JOIN departments d ON e.dept_id=d.id WHERE d.name=?", (dept,)
        ).fetchone()[0]
        ans = "none" if ans is None else ans
    return kind, q, ans


@register_generator("sql_explore")
class SqlExploreGenerator(Generator):
    """Params: departments (4), employees (30)."""

    def case(self, rng: random.Random) -> Identity:
        db = {
            "seed": rng.randrange(2**31),
            "departments": int(self.params.get("departments", 4)),
            "employees": int(self.params.get("employees", 30)),
        }
        conn = build_db(db["seed"], db["departments"], db["employees"])
        try:
            kind, question, answer = _questions(conn, rng)
        finally:
            conn.close()
        return {"db": db, "kind": kind, "question": question, "answer": answer}

    def system_prompt(self) -> str:
        return "You answer questions about a company database. Explore it with the sql_query tool before answering."

    def prompt(self, identity: Identity) -> str:
        return (
            f"{identity['question']}\nThe database is SQLite; start by listing its tables (SELECT name, sql FROM "
            "sqlite_master). When you know the answer, reply with a final line `Answer: <value>`."
        )

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['db']['seed']}:{identity['question']}"

    def reference_completion(self, identity: Identity) -> str:
        return f"Answer: {identity['answer']}"


@register_tool("sql_query")
class SqlQuery(Tool):
    """Runs SQL on the episode's own in-memory copy of the case database. State (temporary tables,
    views) persists across calls within an episode and never leaks into another one."""

    description = "Run one SQLite statement on the company database and return up to 20 rows."
    parameters = {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "a single SQL statement"}},
        "required": ["query"],
    }
    blocking = True

    def create_sync(self, identity: Identity) -> dict[str, Any]:
        db = identity["db"]
        conn = build_db(db["seed"], db["departments"], db["employees"])
        budget = int(self.params.get("max_vm_steps", 2_000_000))
        steps = {"n": 0}

        def progress() -> int:
            # Called every 1000 VM instructions; a non-zero return aborts the statement (runaway joins).
            steps["n"] += 1000
            return 1 if steps["n"] > budget else 0

        conn.set_progress_handler(progress, 1000)
        return {"conn": conn, "calls": 0, "steps": steps}

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        state["calls"] += 1
        state["steps"]["n"] = 0
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult(text='error: pass {"query": "SELECT ..."}', error="bad_arguments")
        max_rows = int(self.params.get("max_rows", 20))
        try:
            cur = state["conn"].execute(query)
            rows = cur.fetchmany(max_rows + 1)
        except sqlite3.Error as exc:
            return ToolResult(text=f"SQL error: {exc}", error=type(exc).__name__, metrics={"calls": state["calls"]})
        header = [d[0] for d in cur.description] if cur.description else []
        more = len(rows) > max_rows
        lines = ["\t".join(header)] if header else []
        lines += ["\t".join("NULL" if v is None else str(v) for v in r) for r in rows[:max_rows]]
        if more:
            lines.append(f"... (more than {max_rows} rows; refine the query)")
        if not lines:
            lines = [f"ok ({state['conn'].total_changes} rows changed so far)"]
        return ToolResult(text="\n".join(lines), metrics={"calls": state["calls"], "rows": min(len(rows), max_rows)})

    def release_sync(self, state: dict[str, Any]) -> None:
        state["conn"].close()
