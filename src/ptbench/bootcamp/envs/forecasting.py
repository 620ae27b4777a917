"""Forecasting: a seeded synthetic series from a known ARMA process; forecast the next `horizon` values.

The hidden future is drawn from the same process at generation time, as is the oracle forecast (the
conditional mean given the shown history and the true parameters, computed with statsmodels' ArmaProcess).
The reward is min(1, MSE_oracle / MSE_model) against the hidden future: the oracle scores 1, a worse
forecast less, a malformed one 0. The tools (fit_arima, autocorrelation) see only the shown history.
Extra: `ptbench[bootcamp-forecasting]` (statsmodels).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import numpy as np

from ptbench.bootcamp.api import (
    Generator,
    Identity,
    Tool,
    ToolResult,
    register_generator,
    register_reward,
    register_tool,
)
from ptbench.bootcamp.envs.answers import LabelledJson


def _stationary_ar(rng: random.Random, p: int) -> list[float]:
    from statsmodels.tsa.arima_process import ArmaProcess

    while True:
        ar = [round(rng.uniform(-0.9, 0.9), 2) for _ in range(p)]
        if ArmaProcess(np.r_[1, -np.asarray(ar)], [1]).isstationary:
            return ar


def oracle_forecast(
    history: list[float], mean: float, ar: list[float], ma: list[float], shocks: list[float], horizon: int
) -> list[float]:
    """E[y_{t+h} | history] with the true parameters: recursion on the AR part with known past shocks."""
    y = [v - mean for v in history]
    e = list(shocks)
    out = []
    for h in range(horizon):
        value = sum(a * y[-1 - i] for i, a in enumerate(ar)) + sum(
            m * e[-1 - i] for i, m in enumerate(ma) if h == 0 or i >= h
        )
        y.append(value)
        e.append(0.0)
        out.append(round(value + mean, 4))
    return out


@register_generator("arma_forecast")
class ArmaForecast(Generator):
    """Params: ar (order p), ma (order q), length (history), horizon, noise (sd)."""

    requires = (("statsmodels", "bootcamp-forecasting"),)

    def case(self, rng: random.Random) -> Identity:
        p, q = int(self.params.get("ar", 1)), int(self.params.get("ma", 0))
        length, horizon, sd = (
            int(self.params.get("length", 60)),
            int(self.params.get("horizon", 5)),
            float(self.params.get("noise", 1.0)),
        )
        ar = _stationary_ar(rng, p) if p else []
        ma = [round(rng.uniform(-0.8, 0.8), 2) for _ in range(q)]
        mean = round(rng.uniform(-5, 5), 1)
        gen = np.random.default_rng(rng.getrandbits(64))
        burn = 50
        e = gen.normal(0.0, sd, burn + length + horizon)
        y = np.zeros_like(e)
        for t in range(len(e)):
            y[t] = (
                e[t]
                + sum(a * y[t - 1 - i] for i, a in enumerate(ar) if t - 1 - i >= 0)
                + sum(m * e[t - 1 - i] for i, m in enumerate(ma) if t - 1 - i >= 0)
            )
        series = [round(float(v) + mean, 3) for v in y[burn:]]
        history, future = series[:length], series[length:]
        shocks = [float(v) for v in e[burn : burn + length]]
        oracle = oracle_forecast(history, mean, ar, ma, shocks, horizon)
        return {
            "history": history,
            "horizon": horizon,
            "future": future,
            "oracle": oracle,
            "process": {"mean": mean, "ar": ar, "ma": ma, "noise": sd},
        }

    def prompt(self, identity: Identity) -> str:
        return (
            f"Here is a time series of {len(identity['history'])} observations from a stationary process:\n"
            f"{' '.join(f'{v:g}' for v in identity['history'])}\n"
            f"Forecast the next {identity['horizon']} values. Tools: fit_arima (fit an ARIMA(p,d,q) and forecast), "
            f"autocorrelation. Finish with one line `Forecast: [v1, ..., v{identity['horizon']}]`. Scored by squared "
            "error against the realised values."
        )

    def reference_completion(self, identity: Identity) -> str:
        return f"Forecast: {json.dumps(identity['oracle'])}"


class _HistoryTool(Tool):
    blocking = True

    def create_sync(self, identity: Identity) -> dict[str, Any]:
        return {"history": identity["history"], "horizon": identity["horizon"]}  # never the future


@register_tool("fit_arima")
class FitArima(_HistoryTool):
    description = (
        "Fit ARIMA(p, d, q) with a constant to the series; returns parameters, AIC and the forecast for the horizon."
    )
    parameters = {
        "type": "object",
        "properties": {"p": {"type": "integer"}, "d": {"type": "integer"}, "q": {"type": "integer"}},
        "required": ["p", "q"],
    }

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        import warnings

        from statsmodels.tsa.arima.model import ARIMA

        try:
            order = tuple(int(arguments.get(k, 0)) for k in ("p", "d", "q"))
        except (TypeError, ValueError):
            return ToolResult(text="error: p, d, q must be integers", error="bad_arguments")
        if not all(0 <= v <= 3 for v in order):
            return ToolResult(text="error: p, d, q must be in 0..3", error="bad_arguments")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = ARIMA(np.asarray(state["history"]), order=order, trend="c" if order[1] == 0 else "n").fit()
        params = ", ".join(f"{n} {v:.3f}" for n, v in zip(fit.model.param_names, fit.params, strict=True))
        fc = ", ".join(f"{v:.3f}" for v in fit.forecast(state["horizon"]))
        return ToolResult(text=f"ARIMA{order}: {params}; AIC {fit.aic:.2f}; forecast [{fc}]")


@register_tool("autocorrelation")
class Autocorrelation(_HistoryTool):
    description = "Sample autocorrelation and partial autocorrelation for lags 1..10."
    parameters = {"type": "object", "properties": {}}

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        from statsmodels.tsa.stattools import acf, pacf

        x = np.asarray(state["history"])
        return ToolResult(
            text=f"acf {np.round(acf(x, nlags=10)[1:], 3).tolist()}; pacf {np.round(pacf(x, nlags=10)[1:], 3).tolist()}"
        )


@register_reward("forecast_mse")
class ForecastMse(LabelledJson):
    partial_credit = True  # the oracle's error over the answer's
    pattern = re.compile(r"(?i)forecast\s*:\s*(\[[^\]]*\])")

    def score_value(self, values: Any, identity: Identity) -> float:
        if (
            not isinstance(values, list)
            or len(values) != identity["horizon"]
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        ):
            return 0.0
        got = np.asarray(values, dtype=float)
        if not np.all(np.isfinite(got)):
            return 0.0
        future, oracle = np.asarray(identity["future"]), np.asarray(identity["oracle"])
        mse_model, mse_oracle = float(np.mean((got - future) ** 2)), float(np.mean((oracle - future) ** 2))
        return 1.0 if mse_model <= mse_oracle else mse_oracle / mse_model
