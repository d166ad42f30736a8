"""A variational autoencoder on synthetic 2-D blobs: an encoder gives a Normal posterior,
rsample draws the latent (with noise given from NumPy, so both libraries draw the same),
the loss is the Bernoulli likelihood of binarized data plus kl_divergence to the prior;
prints the ELBO per epoch and a few distribution quantities."""

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Categorical, Normal, kl_divergence

rng = np.random.default_rng(3)
x_all = rng.standard_normal((256, 12)) + np.repeat([[2.0], [-2.0]], 128, 0) > 0
x_all = torch.from_numpy(x_all.astype(np.float32))
noise = torch.from_numpy(rng.standard_normal((8, 32, 2)).astype(np.float32))


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 4))
        self.dec = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 12))

    def forward(self, x, eps):
        mu, log_sigma = self.enc(x).chunk(2, dim=-1)
        q = Normal(mu, log_sigma.exp())
        z = q.loc + q.scale * eps  # rsample with the given noise
        recon = Bernoulli(logits=self.dec(z))
        prior = Normal(torch.zeros_like(mu), torch.ones_like(mu))
        kl = kl_divergence(q, prior).sum(-1)
        return (recon.log_prob(x).sum(-1) - kl).mean(), q


model = VAE()
with torch.no_grad():  # weights from NumPy: both libraries start from the same point
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.4, 0.4, tuple(p.shape)).astype(np.float32)))
opt = torch.optim.Adam(model.parameters(), lr=0.02)

for epoch in range(4):
    total = 0.0
    for b in range(8):
        xb = x_all[b * 32 : (b + 1) * 32]
        opt.zero_grad()
        elbo, q = model(xb, noise[b])
        (-elbo).backward()
        opt.step()
        total += elbo.item()
    print(f"epoch {epoch} elbo {total / 8:.5f}")

with torch.no_grad():
    _, q = model(x_all[:4], noise[0, :4])
    print("posterior mean", [round(v, 4) for v in q.mean.flatten().tolist()])
    print("posterior entropy", [round(v, 4) for v in q.entropy().sum(-1).tolist()])
    print("log_prob of 0", [round(v, 4) for v in q.log_prob(torch.zeros(4, 2)).sum(-1).tolist()])
    c = Categorical(logits=torch.tensor([[0.5, 1.0, -1.0], [0.0, 0.0, 2.0]]))
    print(
        "categorical",
        [round(v, 4) for v in c.entropy().tolist()],
        [round(v, 4) for v in c.log_prob(torch.tensor([1, 2])).tolist()],
    )
