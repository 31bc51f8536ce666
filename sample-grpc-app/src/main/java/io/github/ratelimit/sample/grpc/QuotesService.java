package io.github.ratelimit.sample.grpc;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.sample.grpc.quotes.Price;
import io.github.ratelimit.sample.grpc.quotes.PricesRequest;
import io.github.ratelimit.sample.grpc.quotes.Quote;
import io.github.ratelimit.sample.grpc.quotes.QuoteRequest;
import io.github.ratelimit.sample.grpc.quotes.QuotesGrpc;
import io.grpc.stub.StreamObserver;

import org.springframework.stereotype.Service;

/**
 * The quotes service. Limits are keyed by the client's address (the default key), which a client cannot choose;
 * {@code application.yml} tunes them by name. Over a limit, a call ends with {@code RESOURCE_EXHAUSTED} and a
 * {@code google.rpc.RetryInfo} saying when to retry.
 */
@Service
public class QuotesService extends QuotesGrpc.QuotesImplBase {

	@Override
	@RateLimited(name = "quotes")
	public void getQuote(QuoteRequest request, StreamObserver<Quote> responseObserver) {
		responseObserver.onNext(Quote.newBuilder().setSymbol(request.getSymbol()).setPriceCents(price(0)).build());
		responseObserver.onCompleted();
	}

	/** A stream costs the ticks it asks for: a client spends its quota on one long stream or on many short ones. */
	@Override
	@RateLimited(name = "prices", cost = "#request.ticks")
	public void streamPrices(PricesRequest request, StreamObserver<Price> responseObserver) {
		for (int tick = 0; tick < request.getTicks(); tick++) {
			responseObserver.onNext(Price.newBuilder()
				.setSymbol(request.getSymbol())
				.setPriceCents(price(tick))
				.setTick(tick)
				.build());
		}
		responseObserver.onCompleted();
	}

	private static long price(int tick) {
		return 10_000 + (tick % 7) * 25L;
	}

}
