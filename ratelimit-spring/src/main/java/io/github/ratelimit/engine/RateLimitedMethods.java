package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * Which methods are rate limited, and by which annotations: the one rule shared by the proxying post-processor and the
 * policy catalogue.
 * <ul>
 * <li>{@code @RateLimited} on a method (directly, repeated, or through a composed annotation) applies to it.
 * <li>Otherwise {@code @RateLimited} on its class applies to it if it is, in a controller, a handler method
 * ({@code @RequestMapping} or a shortcut such as {@code @GetMapping}), or else a public method.
 * </ul>
 *
 * @since 0.2.0
 */
public final class RateLimitedMethods {

	private RateLimitedMethods() {
	}

	/**
	 * Return the {@code @RateLimited} annotations that apply to a method invoked on an instance of a class.
	 * @param method the method
	 * @param targetClass the class of the instance
	 * @return the annotations, empty if the method is not rate limited
	 */
	public static List<RateLimited> annotationsOf(Method method, Class<?> targetClass) {
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		Method specific = ClassUtils.getMostSpecificMethod(method, userClass);
		if (specific.getDeclaringClass() == Object.class || specific.isBridge() || specific.isSynthetic()
				|| Modifier.isStatic(specific.getModifiers())) {
			return List.of();
		}
		List<RateLimited> onMethod = find(MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY));
		if (!onMethod.isEmpty()) {
			return onMethod;
		}
		if (Modifier.isPrivate(specific.getModifiers())) {
			return List.of();
		}
		MergedAnnotations classAnnotations = MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY);
		List<RateLimited> onClass = find(classAnnotations);
		if (onClass.isEmpty()) {
			return List.of();
		}
		boolean applies = classAnnotations.isPresent(Controller.class)
				? MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY).isPresent(RequestMapping.class)
				: Modifier.isPublic(specific.getModifiers());
		return applies ? onClass : List.of();
	}

	/**
	 * Fail for a {@code @RateLimited} method that calls cannot be intercepted on: static or private, or final where
	 * the proxy is a subclass. Such a method would silently never be limited.
	 * @param targetClass the class
	 * @param subclassProxy whether its proxy is a subclass (rather than an interface's)
	 * @throws InvalidRateLimitPolicyException naming the method and why
	 */
	public static void checkInterceptable(Class<?> targetClass, boolean subclassProxy) {
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		boolean onClass = MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class);
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass)) {
			if (method.getDeclaringClass() == Object.class || method.isBridge() || method.isSynthetic()) {
				continue;
			}
			int modifiers = method.getModifiers();
			boolean onMethod = MergedAnnotations.from(method, SearchStrategy.DIRECT).isPresent(RateLimited.class);
			String why = null;
			if (onMethod && (Modifier.isStatic(modifiers) || Modifier.isPrivate(modifiers))) {
				why = Modifier.isStatic(modifiers) ? "static" : "private";
			}
			else if (subclassProxy && Modifier.isFinal(modifiers) && !Modifier.isStatic(modifiers)
					&& (onMethod || (onClass && !annotationsOf(method, userClass).isEmpty()))) {
				why = "final";
			}
			if (why != null) {
				List<RateLimited> annotations = find(MergedAnnotations.from(method, SearchStrategy.DIRECT));
				String name = (!annotations.isEmpty() && !annotations.get(0).name().isBlank())
						? annotations.get(0).name().trim() : userClass.getSimpleName() + "." + method.getName();
				throw new InvalidRateLimitPolicyException(name, "@RateLimited on "
						+ describe(userClass, method) + ": the method is " + why
						+ ", so calls to it never pass through the proxy that limits them; make it a non-" + why
						+ " method of the bean, called from outside it");
			}
		}
	}

	/**
	 * Return whether the class, or one of its methods, carries {@code @RateLimited}.
	 * @param userClass the class
	 * @return whether it has rate limited methods
	 */
	public static boolean hasRateLimitedMethods(Class<?> userClass) {
		if (!isCandidate(userClass)) {
			return false;
		}
		if (MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class)) {
			return true;
		}
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass)) {
			if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Return the beans of a factory whose classes have rate limited methods, by their classes' simple names: what
	 * should be limited, whether or not anything limits it.
	 * @param beanFactory the bean factory
	 * @return the simple names of the beans' classes, in the order the beans are defined
	 * @since 0.4.0
	 */
	public static List<String> beansWithRateLimitedMethods(ConfigurableListableBeanFactory beanFactory) {
		List<String> beans = new ArrayList<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type != null && hasRateLimitedMethods(ClassUtils.getUserClass(type))) {
				beans.add(ClassUtils.getUserClass(type).getSimpleName());
			}
		}
		return beans;
	}

	/**
	 * Return whether a class may have rate limited methods at all: a quick check that skips most classes.
	 * @param type the class
	 * @return whether it is a candidate
	 */
	public static boolean isCandidate(Class<?> type) {
		return org.springframework.core.annotation.AnnotationUtils.isCandidateClass(type, RateLimited.class);
	}

	/** A method as messages name it: {@code OrderController#orders(String)}. */
	static String describe(Class<?> type, Method method) {
		return type.getSimpleName() + "#" + method.getName() + java.util.Arrays.stream(method.getParameterTypes())
			.map(Class::getSimpleName)
			.collect(java.util.stream.Collectors.joining(", ", "(", ")"));
	}

	private static List<RateLimited> find(MergedAnnotations annotations) {
		return annotations.stream(RateLimited.class).map(MergedAnnotation::synthesize).toList();
	}

}
