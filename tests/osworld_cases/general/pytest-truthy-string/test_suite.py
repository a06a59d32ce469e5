def test():
    return 'yes'
