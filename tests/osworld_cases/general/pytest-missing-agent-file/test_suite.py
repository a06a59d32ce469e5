from calc import add

def test():
    return add(2, 3) == 5
