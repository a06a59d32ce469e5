test = 3
