```python
x = 1
```
