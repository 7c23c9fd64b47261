module ocdir

go 1.19
