from helper import twice

def add(a, b):
    return twice(a) // 2 + b
