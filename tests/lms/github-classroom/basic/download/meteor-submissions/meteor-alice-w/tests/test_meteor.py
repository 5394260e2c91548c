from meteor import meteor_score


def test_identical():
    assert meteor_score('a b', 'a b') > 0.9
