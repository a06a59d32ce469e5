def add(a, b):
    raise ValueError('x')
