"""An object-oriented solution: an Alignment class holds the tokens and derives every quantity."""

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Alignment:
    reference: list
    candidate: list
    matched: list = field(init=False)

    def __post_init__(self):
        pool = Counter(self.reference)
        self.matched = []
        for token in self.candidate:
            hit = pool[token] > 0
            pool[token] -= int(hit)
            self.matched.append(hit)

    @property
    def matches(self):
        return sum(self.matched)

    @property
    def chunks(self):
        starts = zip([False] + self.matched, self.matched)
        return sum(1 for before, now in starts if now and not before)

    def precision(self):
        return self.matches / len(self.candidate)

    def recall(self):
        return self.matches / len(self.reference)


class Meteor:
    def __init__(self, alpha=0.9, beta=3, gamma=0.5):
        self.alpha, self.beta, self.gamma = alpha, beta, gamma

    def score(self, reference, candidate):
        a = Alignment(reference.lower().split(), candidate.lower().split())
        if not a.reference or not a.candidate or a.matches == 0:
            return 0.0
        p, r = a.precision(), a.recall()
        fmean = p * r / (self.alpha * p + (1 - self.alpha) * r)
        penalty = self.gamma * (a.chunks / a.matches) ** self.beta
        return round(fmean * (1 - penalty), 3)


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    return Meteor(alpha, beta, gamma).score(reference, candidate)
