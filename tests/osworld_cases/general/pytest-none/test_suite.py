def test():
    pass
