from calc import add

def test():
    return sum(add(i, 0) == i for i in range(4)) / 8
