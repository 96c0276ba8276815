#!/usr/bin/python3
"""The calculator service's client, as its users wrote it against the WF 3.5 service: a SOAP
client generated from the WSDL (python3-zeep here), whose HTTP session keeps the WscContext
cookie that PowerOn's reply sets, so every later call reaches the same workflow instance.
usage: calculator_client.py http://127.0.0.1:PORT/ICalculator"""
import sys

import requests
import zeep
from zeep.transports import Transport


def main(url):
    session = requests.Session()
    calculator = zeep.Client(url + "?wsdl", transport=Transport(session=session)).service
    print("PowerOn ->", calculator.PowerOn())
    print("Add(12) ->", calculator.Add(value=12))
    print("Multiply(3) ->", calculator.Multiply(value=3))
    print("Subtract(6) ->", calculator.Subtract(value=6))
    print("Divide(5) ->", calculator.Divide(value=5))
    print("PowerOff ->", calculator.PowerOff())


if __name__ == "__main__":
    main(sys.argv[1])
