"""Fit a cubic to sin(x) two ways: by hand with autograd and manual SGD updates, then with
an nn.Module of a Parameter per coefficient, an optimizer and a learning-rate schedule;
prints the loss along the way and the coefficients found."""

import math

import torch

torch.set_default_dtype(torch.float64)

x = torch.linspace(-math.pi, math.pi, 400)
y = torch.sin(x)

# by hand: tensors that require grad, updated under no_grad
a, b, c, d = (torch.full((), v, requires_grad=True) for v in (0.1, -0.2, 0.3, -0.1))
lr = 1e-6
for t in range(400):
    y_pred = a + b * x + c * x**2 + d * x**3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(f"manual step {t} loss {loss.item():.6f}")
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= lr * p.grad
            p.grad = None
print(f"manual y = {a.item():.5f} + {b.item():.5f} x + {c.item():.5f} x^2 + {d.item():.5f} x^3")


class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.coeffs = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.tensor(v)) for v in (0.1, -0.2, 0.3, -0.1)]
        )

    def forward(self, x):
        return sum(c * x**i for i, c in enumerate(self.coeffs))


# features through a Linear layer on the powers of x
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.5, -0.1, 0.2]]))
    model[0].bias.fill_(0.05)
loss_fn = torch.nn.MSELoss(reduction="sum")
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for t in range(300):
    loss = loss_fn(model(xx), y)
    if t % 100 == 99:
        print(f"rmsprop step {t} loss {loss.item():.6f}")
    opt.zero_grad()
    loss.backward()
    opt.step()
w = model[0].weight
print(f"linear bias {model[0].bias.item():.5f} weights {w[0, 0]:.5f} {w[0, 1]:.5f} {w[0, 2]:.5f}")

# the Module of Parameters with SGD + momentum and two schedules
poly = Polynomial3()
opt = torch.optim.SGD(poly.parameters(), lr=2e-6, momentum=0.9)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=50)
decay = torch.optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[50])
for t in range(300):
    loss = (poly(x) - y).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if t % 100 == 99:
        print(f"sgd step {t} loss {loss.item():.6f} lr {sched.get_last_lr()[0]:.3e}")
print("poly", " ".join(f"{c.item():.5f}" for c in poly.coeffs))
print("state", sorted(poly.state_dict()), str(poly.coeffs[0].dtype).split(".")[-1])

# closure-based LBFGS on the same cubic
coef = torch.zeros(4, requires_grad=True)
lbfgs = torch.optim.LBFGS([coef], lr=1, max_iter=50, line_search_fn="strong_wolfe")
powers = torch.stack([x**i for i in range(4)], dim=1)


def closure():
    lbfgs.zero_grad()
    loss = ((powers @ coef - y) ** 2).mean()
    loss.backward()
    return loss


final = lbfgs.step(closure)
print(f"lbfgs loss {closure().item():.8f} coef", [f"{v:.5f}" for v in coef.tolist()])
