import os
x = 2
