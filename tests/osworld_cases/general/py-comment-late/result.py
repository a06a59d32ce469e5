x = 1
#!/bin/sh
