def test():
    return open('data.txt').read().strip() == '42'
