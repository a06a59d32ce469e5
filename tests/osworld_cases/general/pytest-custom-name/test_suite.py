from calc import add

def check_it():
    return add(1, 1) == 2
