import b
class A:
    def m(self):
        return 0
class B:
    def m(self):
        return 1
