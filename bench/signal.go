package main

import "os"

var interrupt = os.Interrupt
