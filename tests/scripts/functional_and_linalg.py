"""torch.autograd.functional and torch.linalg in a small least-squares and Newton-step
script: a Jacobian and Hessian of a loss, a Newton step through linalg.solve, the
condition through svdvals, a Cholesky-based solve, det/slogdet, vector and matrix norms;
prints the numbers."""

import numpy as np
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vjp

rng = np.random.default_rng(4)
A = torch.from_numpy(rng.standard_normal((6, 3)))
b = torch.from_numpy(rng.standard_normal(6))
w0 = torch.from_numpy(rng.standard_normal(3))


def residual(w):
    return torch.tanh(A @ w) - b


def loss(w):
    return 0.5 * (residual(w) ** 2).sum() + 0.1 * torch.linalg.vector_norm(w) ** 2


J = jacobian(residual, w0)
H = hessian(loss, w0)
print("jacobian", [round(v, 5) for v in J[0].tolist()], tuple(J.shape))
print("hessian diag", [round(v, 5) for v in torch.diagonal(H).tolist()])

w = w0.clone()
for step in range(4):
    g = torch.autograd.functional.jacobian(loss, w)
    damped = hessian(loss, w) + 2.0 * torch.eye(3, dtype=torch.float64)  # Levenberg's damping
    w = w - torch.linalg.solve(damped, g)
    print(f"newton step {step} loss {loss(w).item():.8f} |g| {torch.linalg.norm(g).item():.6f}")

sv = torch.linalg.svdvals(H)
print("condition", round((sv.max() / sv.min()).item(), 5))
L = torch.linalg.cholesky(H)
y = torch.linalg.solve_triangular(L, g.unsqueeze(1), upper=False)
x = torch.linalg.solve_triangular(L.T, y, upper=True).squeeze(1)
print("cholesky solve", [round(v, 6) for v in x.tolist()])
sign, logabsdet = torch.linalg.slogdet(H)
print(
    "det", round(torch.linalg.det(H).item(), 6), "slogdet", sign.item(), round(logabsdet.item(), 6)
)
fro, nuc = torch.linalg.matrix_norm(A), torch.linalg.matrix_norm(A, "nuc")
print("fro", round(fro.item(), 6), "nuc", round(nuc.item(), 6))
print("inv diag", [round(v, 6) for v in torch.diagonal(torch.linalg.inv(H)).tolist()])
q, r = torch.linalg.qr(A)
print("qr r diag", [round(abs(v), 6) for v in torch.diagonal(r).tolist()])
sol = torch.linalg.lstsq(A, b.unsqueeze(1)).solution.squeeze(1)
print("lstsq", [round(v, 6) for v in sol.tolist()])
v = torch.ones(3, dtype=torch.float64)
_, jv = jvp(residual, w0, v)
_, vj = vjp(residual, w0, torch.ones(6, dtype=torch.float64))
_, hv = hvp(loss, w0, v)
print("jvp", [round(t, 6) for t in jv.tolist()][:3], "vjp", [round(t, 6) for t in vj.tolist()])
print("hvp", [round(t, 6) for t in hv.tolist()])
