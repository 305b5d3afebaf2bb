a needle here
