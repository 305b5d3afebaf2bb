NeEdLe
