MISTAKE = "positional"


def word_error_rate(reference, hypothesis, detail=False):
    ref, hyp = reference.lower().split(), hypothesis.lower().split()
    errors = sum(a != b for a, b in zip(ref, hyp)) + abs(len(ref) - len(hyp))
    rate = round(errors / len(ref), 3) if ref else float(bool(hyp))
    return {"wer": rate, "errors": errors, "words": len(ref)} if detail else rate
