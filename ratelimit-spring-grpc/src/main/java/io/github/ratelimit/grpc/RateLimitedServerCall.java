package io.github.ratelimit.grpc;

import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.grpc.StatusException;
import org.jspecify.annotations.Nullable;

import org.springframework.web.ErrorResponseException;

/**
 * One call of a rate limited gRPC method: decided before the service sees it (with its one message where the client
 * sends one, else as it starts), its rate-limit fields added to the response headers, and, once it ends however it
 * ends (closed by the service, cancelled), settled from its final status and its concurrency slots given back.
 * gRPC never calls a call's methods, nor its listener's, at once from two threads.
 */
final class RateLimitedServerCall<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

	private final RateLimitEngine engine;

	private final GrpcServiceMethods.Target target;

	private final GrpcRateLimitRequest request;

	private final Metadata requestHeaders;

	private final ServerCallHandler<ReqT, RespT> next;

	private final AtomicBoolean ended = new AtomicBoolean();

	private @Nullable RateLimitOutcome outcome;

	private Metadata rateLimitHeaders = new Metadata();

	private boolean headersSent;

	RateLimitedServerCall(RateLimitEngine engine, GrpcServiceMethods.Target target, ServerCall<ReqT, RespT> call,
			Metadata requestHeaders, GrpcRateLimitRequest request, ServerCallHandler<ReqT, RespT> next) {
		super(call);
		this.engine = engine;
		this.target = target;
		this.requestHeaders = requestHeaders;
		this.request = request;
		this.next = next;
	}

	/** Start the call: decided now if its client streams, else once its message came. */
	ServerCall.Listener<ReqT> start() {
		this.engine.settlement().settledByStack(this.request);
		if (!this.target.clientSendsOneMessage()) {
			return decide(null) ? new EndingListener<>(this.next.startCall(this, this.requestHeaders), this)
					: new ServerCall.Listener<>() {
					};
		}
		super.request(1); // the service is not started yet: ask for the message it is decided with
		return new FirstMessageListener();
	}

	/** Decide the call; a rejected one is closed. */
	private boolean decide(@Nullable ReqT message) {
		this.request.setMessage(message);
		RateLimitOutcome outcome = this.engine.decideMethod(this.target.method(), this.target.targetClass(),
				this.target.arguments(message), this.request);
		if (outcome == null) {
			return true;
		}
		this.outcome = outcome;
		this.rateLimitHeaders = GrpcResponses.headers(outcome);
		ErrorResponseException rejection = outcome.rejection();
		if (rejection == null) {
			return true;
		}
		StatusException closing = GrpcResponses.rejection(rejection);
		Metadata trailers = closing.getTrailers();
		close(closing.getStatus(), (trailers != null) ? trailers : new Metadata());
		return false;
	}

	@Override
	public void sendHeaders(Metadata headers) {
		headers.merge(this.rateLimitHeaders);
		this.headersSent = true;
		super.sendHeaders(headers);
	}

	@Override
	public void close(Status status, Metadata trailers) {
		if (!this.headersSent) {
			// Not trailers only: the rate-limit fields are headers, on a rejection and on an error too.
			sendHeaders(new Metadata());
		}
		end(status);
		super.close(status, trailers);
	}

	/** Settle what the call took, from its final status, and give back its slots; once. */
	void end(Status status) {
		if (this.ended.compareAndSet(false, true)) {
			RateLimitOutcome outcome = this.outcome;
			if (outcome != null && !outcome.isRejected()) {
				this.engine.settlement().settle(outcome, this.request, this.target.method(), null, null);
			}
			this.engine.settlement().settleRequestAsync(this.request, GrpcResponses.httpStatus(status));
			this.engine.settlement().releaseRequestAsync(this.request);
		}
	}

	/** Until the message came: the service is started once the call is decided, and only if it is admitted. */
	private final class FirstMessageListener extends ServerCall.Listener<ReqT> {

		private ServerCall.@Nullable Listener<ReqT> service;

		private boolean rejected;

		@Override
		public void onMessage(ReqT message) {
			ServerCall.Listener<ReqT> service = this.service;
			if (service != null) {
				service.onMessage(message); // the service says what a second message of a unary call is
				return;
			}
			if (this.rejected) {
				return;
			}
			if (!decide(message)) {
				this.rejected = true;
				return;
			}
			service = startService();
			service.onMessage(message);
		}

		@Override
		public void onHalfClose() {
			if (!this.rejected) {
				// Without a message the service refuses the call itself, as it does any unary call without one.
				ServerCall.Listener<ReqT> service = (this.service != null) ? this.service : startService();
				service.onHalfClose();
			}
		}

		@Override
		public void onCancel() {
			end(Status.CANCELLED);
			if (this.service != null) {
				this.service.onCancel();
			}
		}

		@Override
		public void onComplete() {
			if (this.service != null) {
				this.service.onComplete();
			}
		}

		@Override
		public void onReady() {
			if (this.service != null) {
				this.service.onReady();
			}
		}

		private ServerCall.Listener<ReqT> startService() {
			ServerCall.Listener<ReqT> service = RateLimitedServerCall.this.next.startCall(RateLimitedServerCall.this,
					RateLimitedServerCall.this.requestHeaders);
			this.service = service;
			if (isReady()) {
				service.onReady(); // the transport said so before the service listened
			}
			return service;
		}

	}

	/** A started call's listener, that ends the call when the client cancels it. */
	private static final class EndingListener<ReqT>
			extends io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT> {

		private final RateLimitedServerCall<ReqT, ?> call;

		EndingListener(ServerCall.Listener<ReqT> delegate, RateLimitedServerCall<ReqT, ?> call) {
			super(delegate);
			this.call = call;
		}

		@Override
		public void onCancel() {
			this.call.end(Status.CANCELLED);
			super.onCancel();
		}

	}

}
