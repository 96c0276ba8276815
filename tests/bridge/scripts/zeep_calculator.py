#!/usr/bin/python3
"""A SOAP client generated from the service's WSDL by zeep drives a calculator-style workflow
service: PowerOn creates the instance, whose context comes back in the WscContext cookie that
the client's HTTP session keeps and sends with every later call; PowerOff closes it.
usage: zeep_calculator.py http://127.0.0.1:PORT/ICalculator  (prints one line per call)"""
import sys

import requests
import zeep
from zeep.transports import Transport


def main(url):
    session = requests.Session()  # keeps cookies: the instance context needs no client code
    client = zeep.Client(url + "?wsdl", transport=Transport(session=session))
    calc = client.service
    calc.PowerOn()
    print("context cookie:", "WscContext" in session.cookies)
    print("Add 5 ->", calc.Add(value=5))
    print("Multiply 4 ->", calc.Multiply(value=4))
    print("Subtract 6 ->", calc.Subtract(value=6))
    print("PowerOff ->", calc.PowerOff())
    try:
        calc.Add(value=1)
        print("Add after PowerOff -> no fault")
    except zeep.exceptions.Fault as fault:
        print("Add after PowerOff -> fault:", fault.message)


if __name__ == "__main__":
    main(sys.argv[1])
