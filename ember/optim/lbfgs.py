"""``LBFGS``: limited-memory BFGS over all parameters flattened into one vector, optionally
with a line search satisfying the strong Wolfe conditions (after minFunc and torch/optim's
``lbfgs.lua``/``lswolfe.lua``).

# NOTE [LBFGS scalars]
As in PyTorch, the scalars of the method that come from tensors (dot products, the
curvature ``ys``, the step ``t`` after an interpolation) stay 0-dim tensors of the
parameters' dtype, so a float32 problem is solved in float32 arithmetic, as PyTorch solves
it, and each comparison reads one value. Where PyTorch passes such a tensor as a ``Scalar``
argument (``alpha=``), it is read as a Python number first, which is what PyTorch's argument
parser does with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ember
from ember._tensor import Tensor
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, as_real

__all__ = ["LBFGS"]

Number = Any  # a Python float or a 0-dim tensor (NOTE [LBFGS scalars])


class LBFGS(Optimizer):
    """L-BFGS, PyTorch's formulation: ``step(closure)`` runs up to ``max_iter`` iterations
    (``max_eval`` closure calls), keeping ``history_size`` curvature pairs across calls.

    >>> x = ember.nn.Parameter(ember.tensor([3.0, -2.0]))
    >>> opt = ember.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad(); loss = ((x - 1) ** 2).sum(); loss.backward(); return loss
    >>> _ = opt.step(closure); [round(v, 4) for v in x.tolist()]
    [1.0, 1.0]
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_hyperparameters("LBFGS", lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change, history_size=history_size,
            line_search_fn=line_search_fn,
        )  # fmt: skip
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    # ------------------------------------------------------------- the flat vector
    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() * (2 if p.is_complex() else 1) for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        """Every parameter's gradient (zeros where there is none) as one vector."""
        views = []
        for p in self._params:
            grad = p.grad if p.grad is not None else ember.zeros_like(p)
            views.append(as_real([grad])[0].reshape(-1))
        return ember.cat(views, 0)

    def _add_grad(self, step_size: Number, update: Tensor) -> None:
        """``params += step_size * update``, ``update`` being a flat vector."""
        alpha = float(step_size)
        offset = 0
        for p in as_real(self._params):
            n = p.numel()
            p.add_(update[offset : offset + n].view(p.shape), alpha=alpha)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"LBFGS: updated {offset} values of {self._numel()}")

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Tensor], t: Number, d: Tensor
    ) -> tuple[float, Tensor]:
        """The loss and flat gradient at ``x + t * d``; the parameters are left at ``x``."""
        self._add_grad(t, d)
        loss = float(self._eval_closure(closure))
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params, x, strict=True):
            p.copy_(saved)
        return loss, flat_grad

    # ------------------------------------------------------------------- the step
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Minimize from the current parameters; ``closure`` clears the gradients, computes
        the loss, calls ``backward()`` and returns the loss. Returns its first loss.

        >>> w = ember.nn.Parameter(ember.tensor([2.0]))
        >>> opt = ember.optim.LBFGS([w], max_iter=5)
        >>> def closure():
        ...     opt.zero_grad(); loss = (w**2).sum(); loss.backward(); return loss
        >>> opt.step(closure)
        tensor(4., grad_fn=<SumBackward0>)
        """
        with ember.no_grad():
            return self._minimize(closure)

    def _minimize(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        # the method's state is global; it is kept as the first parameter's state so
        # load_state_dict casts it (as PyTorch does)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._eval_closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        for n_iter in range(1, max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:  # steepest descent to start
                d = flat_grad.neg()
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == group["history_size"]:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                d = self._two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, state)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction (to tolerance)
                break

            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]

                def evaluate(
                    step: Number, x: list[Tensor] = x_init, d: Tensor = d
                ) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, step, d)

                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    evaluate, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                ls_evals = 0
                opt_cond = False
                if n_iter != max_iter:  # the last iteration's loss would go unused
                    loss = float(self._eval_closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # the step no longer moves
                break
            if abs(loss - prev_loss) < tolerance_change:  # the loss no longer moves
                break

        state.update(
            d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
            prev_flat_grad=prev_flat_grad, prev_loss=prev_loss,
        )  # fmt: skip
        return orig_loss

    def _two_loop(
        self,
        flat_grad: Tensor,
        old_dirs: list[Tensor],
        old_stps: list[Tensor],
        ro: list[Tensor],
        H_diag: Number,
        state: dict[str, Any],
    ) -> Tensor:
        """The L-BFGS direction ``-H grad`` by the two-loop recursion over the history, with
        ``H_diag`` times the identity as the initial inverse Hessian."""
        if "al" not in state:
            state["al"] = [None] * self.param_groups[0]["history_size"]
        al = state["al"]
        q = flat_grad.neg()
        for i in reversed(range(len(old_dirs))):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-float(al[i]))
        r = ember.mul(q, H_diag)
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=float(al[i] - be_i))
        return r


def _sqrt(x: Number) -> Number:
    return x.sqrt() if isinstance(x, Tensor) else math.sqrt(x)


def _cubic_minimum(
    x1: Number,
    f1: Number,
    g1: Number,
    x2: Number,
    f2: Number,
    g2: Number,
    bounds: tuple[Number, Number] | None = None,
) -> Number:
    """The minimizer, clamped to ``bounds`` (default: between the points), of the cubic
    through two points with their values ``f`` and slopes ``g``; the middle of the bounds
    when the cubic has no minimum."""
    if bounds is None:
        bounds = (x1, x2) if x1 <= x2 else (x2, x1)
    lo, hi = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = _sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, lo), hi)


def _strong_wolfe(
    evaluate: Callable[[Number], tuple[float, Tensor]],
    t: Number,
    d: Tensor,
    f: float,
    g: Tensor,
    gtd: Tensor,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Tensor, Number, int]:
    """A step ``t`` along ``d`` satisfying the strong Wolfe conditions (sufficient decrease
    ``c1``, curvature ``c2``), found by bracketing then zooming with cubic interpolation;
    returns the loss, the flat gradient and ``t`` there, and the number of evaluations."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = g_new.dot(d)

    def armijo_fails(t: Number, f_new: float) -> bool:
        return bool(f_new > (f + c1 * t * gtd))

    # bracket: grow the step until an interval holds a point satisfying the conditions
    # (each point is [t, f, g, gtd])
    prev: list[Any] = [0, f, g, gtd]
    bracket: list[list[Any]] = []
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if armijo_fails(t, f_new) or (ls_iter > 1 and f_new >= prev[1]):
            bracket = [prev, [t, f_new, g_new.clone(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if gtd_new >= 0:
            bracket = [prev, [t, f_new, g_new.clone(), gtd_new]]
            break
        bounds = (t + 0.01 * (t - prev[0]), t * 10)
        next_t = _cubic_minimum(prev[0], prev[1], prev[3], t, f_new, gtd_new, bounds=bounds)
        prev = [t, f_new, g_new.clone(), gtd_new]
        t = next_t
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]

    # zoom: shrink the bracket around the point
    insuf_progress = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1][0] - bracket[0][0]) * d_norm < tolerance_change:
            break
        a, b = bracket
        t = _cubic_minimum(a[0], a[1], a[3], b[0], b[1], b[3])
        # a point too close to an end of the bracket, twice in a row or beyond it, moves
        # to a tenth of the bracket's length inside
        t_lo, t_hi = min(a[0], b[0]), max(a[0], b[0])
        margin = 0.1 * (t_hi - t_lo)
        if min(t_hi - t, t - t_lo) < margin:
            if insuf_progress or t >= t_hi or t <= t_lo:
                t = t_hi - margin if abs(t - t_hi) < abs(t - t_lo) else t_lo + margin
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        point = [t, f_new, g_new.clone(), gtd_new]
        if armijo_fails(t, f_new) or f_new >= bracket[low][1]:
            bracket[high] = point
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
            continue
        if abs(gtd_new) <= -c2 * gtd:
            done = True
        elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
            bracket[high] = bracket[low]  # the old low end becomes the high end
        bracket[low] = point

    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals
