#!/a
#!/b
#!/c
# coding: utf-8
x = 1
