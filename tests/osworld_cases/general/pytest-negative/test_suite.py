def test():
    return -2
