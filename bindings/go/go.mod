module ocdir.invalid/ocdir

go 1.19
