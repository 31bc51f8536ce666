package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RateLimitedMethods;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.MethodMatcher;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcher;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.util.ClassUtils;

/**
 * Proxies every bean that has {@code @RateLimited} methods, with the web stack's interceptor
 * ({@link RateLimitInterceptor} on Spring MVC) in front of any other advice (so a rejected request opens no
 * transaction). Like Spring's own {@code @Async} and {@code @ConcurrencyLimit} support, it works whether or not
 * AspectJ auto-proxying is on, and understands repeated and composed annotations.
 * <p>
 * The interceptor is looked up on first use, so that creating this post-processor early does not create the
 * limiter and its store early.
 *
 * @since 0.1.0
 */
public class RateLimitedAnnotationBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
		implements PolicyCatalog.RateLimitedClasses {

	private static final String GRPC_SERVICE = "io.grpc.BindableService";

	private static final boolean GRPC_MODULE = ClassUtils.isPresent(
			"io.github.ratelimit.grpc.RateLimitServerInterceptor",
			RateLimitedAnnotationBeanPostProcessor.class.getClassLoader());

	private final Set<Class<?>> eligibleClasses = ConcurrentHashMap.newKeySet();

	private volatile @Nullable Consumer<Class<?>> eligibleClassListener;

	private final Consumer<Class<?>> classCheck;

	/**
	 * Create a post-processor.
	 * @param interceptor the interceptor, looked up on first use
	 */
	public RateLimitedAnnotationBeanPostProcessor(ObjectProvider<? extends MethodInterceptor> interceptor) {
		this(interceptor, (targetClass) -> {
		});
	}

	/**
	 * Create a post-processor that also checks each class with rate limited methods as its bean is created, besides
	 * that its methods can be intercepted: what the web stack's interceptor needs of them (on WebFlux, a reactive
	 * return type).
	 * @param interceptor the interceptor, looked up on first use
	 * @param classCheck the check, which throws to fail the bean's creation
	 * @since 0.3.0
	 */
	public RateLimitedAnnotationBeanPostProcessor(ObjectProvider<? extends MethodInterceptor> interceptor,
			Consumer<Class<?>> classCheck) {
		this.classCheck = classCheck;
		DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(new RateLimitedPointcut(),
				new LazyInterceptor(interceptor));
		this.advisor = advisor;
		setBeforeExistingAdvisors(true);
	}

	@Override
	protected boolean isEligible(Class<?> targetClass) {
		if (isGrpcService(targetClass)) {
			return false;
		}
		if (RateLimitedMethods.isCandidate(targetClass)) {
			RateLimitedMethods.checkInterceptable(targetClass, isProxyTargetClass());
			if (RateLimitedMethods.hasRateLimitedMethods(ClassUtils.getUserClass(targetClass))) {
				this.classCheck.accept(targetClass);
			}
		}
		boolean eligible = super.isEligible(targetClass);
		if (eligible && this.eligibleClasses.add(targetClass)) {
			Consumer<Class<?>> listener = this.eligibleClassListener;
			if (listener != null) {
				listener.accept(targetClass);
			}
		}
		return eligible;
	}

	/**
	 * With the gRPC module, a gRPC service's calls are decided by its server interceptor: a proxy would decide them
	 * twice (a generated service binds itself with a final method, so its calls go through the proxy), and fail a web
	 * stack's check of return types. Without it, the web stack's interceptor is all there is.
	 */
	private static boolean isGrpcService(Class<?> targetClass) {
		return GRPC_MODULE && ClassUtils.getAllInterfacesForClassAsSet(targetClass)
			.stream()
			.anyMatch((type) -> type.getName().equals(GRPC_SERVICE));
	}

	@Override
	public Set<Class<?>> eligibleClasses() {
		return this.eligibleClasses;
	}

	/**
	 * Have classes that become eligible from now on (lazy beans) checked when their bean is created.
	 */
	@Override
	public void onEligibleClass(Consumer<Class<?>> listener) {
		this.eligibleClassListener = listener;
	}

	private static final class RateLimitedPointcut extends StaticMethodMatcher implements Pointcut {

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return !RateLimitedMethods.annotationsOf(method, targetClass).isEmpty();
		}

		@Override
		public ClassFilter getClassFilter() {
			return RateLimitedMethods::isCandidate;
		}

		@Override
		public MethodMatcher getMethodMatcher() {
			return this;
		}

	}

	private static final class LazyInterceptor implements MethodInterceptor {

		private final ObjectProvider<? extends MethodInterceptor> provider;

		private volatile @Nullable MethodInterceptor interceptor;

		LazyInterceptor(ObjectProvider<? extends MethodInterceptor> provider) {
			this.provider = provider;
		}

		@Override
		public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
			MethodInterceptor interceptor = this.interceptor;
			if (interceptor == null) {
				interceptor = this.provider.getObject();
				this.interceptor = interceptor;
			}
			return interceptor.invoke(invocation);
		}

	}

}
